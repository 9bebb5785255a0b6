#include "layout.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <string_view>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"
#include "cadclip/model/checkpoint_io.h"
#include "store.h"

namespace cadclip::index::detail {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBuilding = ".building-";

// The files of an index made before versions, at the top of its folder.
constexpr const char* kUnversioned[] = {
    kCatalogFile,     "catalog.sqlite-journal", kVectorsFile,   kThumbnailDir,
    "failures.jsonl", "warnings.jsonl",         "options.json", "work"};

std::optional<int64_t> version_number(const std::string& name) {
  if (name.empty() || name.size() > 15 || name.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(name);
}

void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// The version CURRENT names; throws when it names none.
fs::path named_version(const fs::path& index) {
  const std::string name = trimmed(read_text_file(index / kCurrentFile));
  const fs::path relative(name);
  const bool shaped = relative.parent_path() == kVersionsDir &&
                      version_number(relative.filename().string()).has_value();
  if (!shaped)
    throw Error(
        format("{} names '{}', which is no version of the index; the index is damaged: "
               "build it again into a new folder with `cadclip index`",
               (index / kCurrentFile).string(), name.substr(0, 80)));
  return index / relative;
}

}  // namespace

fs::path model_folder(const fs::path& index, const std::string& identity) {
  return index / kModelsDir / identity;
}

// ---- FileLock -----------------------------------------------------------------

std::optional<FileLock> FileLock::acquire(const fs::path& file, bool exclusive, bool wait,
                                          bool create) {
  // flock() needs no write access: a reader of a read-only index can lock too.
  const int fd = create ? ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)
                        : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && !create && errno == ENOENT) return std::nullopt;
  if (fd < 0)
    throw Error(format("cannot open the lock file {}: {}; check that the folder is writable",
                       file.string(), std::strerror(errno)));
  const int operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) return std::nullopt;
    throw Error(format("cannot lock {}: {}", file.string(), std::strerror(error)));
  }
  return FileLock(fd);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the file releases the lock
}

// ---- IndexWriter --------------------------------------------------------------

IndexWriter IndexWriter::open(const fs::path& index, bool wait) {
  fs::create_directories(index);
  const fs::path lock_file = index / kLockFile;
  std::optional<FileLock> lock = FileLock::acquire(lock_file, /*exclusive=*/true, /*wait=*/false);
  if (!lock) {
    std::string holder = trimmed(read_text_file(lock_file));
    holder = holder.empty() ? "" : format(" (pid {})", holder.substr(0, 20));
    if (!wait)
      throw Error(
          format("{} is being written by another `cadclip index`{}; wait for it to finish, or "
                 "pass --wait to let this one wait for it",
                 index.string(), holder));
    log::info("index", "waiting for the other `cadclip index`{} writing {}", holder,
              index.string());
    lock = FileLock::acquire(lock_file, /*exclusive=*/true, /*wait=*/true);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock->fd(), 0) != 0 ||
      ::pwrite(lock->fd(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    log::warn("index", "cannot write the pid into {}: {}", lock_file.string(),
              std::strerror(errno));
  IndexWriter writer(index, std::move(*lock));
  // What a killed writer left: a half-built version, a half-written CURRENT.
  std::error_code ec;
  for (const char* dir : {kVersionsDir, kModelsDir}) {
    for (const auto& entry : fs::directory_iterator(index / dir, ec)) {
      if (entry.path().filename().string().find(kBuilding) == std::string::npos) continue;
      log::info("index", "removing {}, left by a `cadclip index` that did not finish",
                entry.path().string());
      fs::remove_all(entry.path());
    }
  }
  // A file written atomically is <name>.tmp<pid> until it is renamed.
  const auto temporary_of = [](const std::string& name, std::string_view file) {
    return name.starts_with(file) && std::string_view(name).substr(file.size()).starts_with(".tmp");
  };
  for (const auto& entry : fs::directory_iterator(index)) {
    const std::string name = entry.path().filename().string();
    if (temporary_of(name, kCurrentFile) || temporary_of(name, kVectorsFile))
      fs::remove(entry.path());
  }
  return writer;
}

std::optional<fs::path> IndexWriter::current() const {
  if (fs::exists(index_ / kCurrentFile)) {
    const fs::path version = named_version(index_);
    if (!fs::exists(version / kCatalogFile))
      throw Error(
          format("{} names {}, which has no {}; the index is damaged: build it again into "
                 "a new folder with `cadclip index`",
                 (index_ / kCurrentFile).string(), version.string(), kCatalogFile));
    return version;
  }
  if (fs::exists(index_ / kCatalogFile)) return index_;
  return std::nullopt;
}

fs::path IndexWriter::begin_version() {
  CADCLIP_CHECK(staging_.path().empty(), "begin_version() twice without commit_version()");
  int64_t last = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(index_ / kVersionsDir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::optional<int64_t> n = version_number(name.substr(0, name.find('.')));
    if (n) last = std::max(last, *n);
  }
  next_ = last + 1;
  staging_ = ScratchDir(index_ / kVersionsDir / format("{}{}{}", next_, kBuilding, ::getpid()));
  fs::create_directories(staging_.path() / kThumbnailDir);
  write_text_atomic(staging_.path() / kReaderLock, "");
  return staging_.path();
}

void IndexWriter::store_model(const fs::path& checkpoint, const std::string& identity) {
  const fs::path folder = model_folder(index_, identity);
  if (fs::exists(folder / "model.safetensors")) {
    if (model::checkpoint_identity(folder) == identity) return;
    log::warn("index",
              "{} holds other weights than its name says (changed since?); copying "
              "the model again",
              folder.string());
  }
  ScratchDir staging(index_ / kModelsDir / format("{}{}{}", identity, kBuilding, ::getpid()));
  model::copy_checkpoint_model(checkpoint, staging.path());
  const std::string copied = model::checkpoint_identity(staging.path());
  if (copied != identity)
    throw Error(
        format("the model copied from {} into the index has weights {}, not {} as recorded; "
               "the checkpoint changed while the index was being built: run `cadclip index` "
               "again",
               checkpoint.string(), copied.substr(0, 16), identity.substr(0, 16)));
  sync_path(staging.path() / "text");
  sync_path(staging.path());
  fs::remove_all(folder);
  fs::rename(staging.path(), folder);
  staging.release();
  sync_path(index_ / kModelsDir);
  log::info("index", "the index carries its model: {}", folder.string());
}

fs::path IndexWriter::commit_version() {
  CADCLIP_CHECK(!staging_.path().empty(), "commit_version() without begin_version()");
  const fs::path version = index_ / kVersionsDir / std::to_string(next_);
  sync_path(staging_.path() / kThumbnailDir);
  sync_path(staging_.path());
  fs::rename(staging_.path(), version);
  staging_.release();
  sync_path(index_ / kVersionsDir);
  // The commit point: readers that open the index from now on get `version`.
  write_text_atomic(index_ / kCurrentFile, format("{}/{}\n", kVersionsDir, next_));
  if (fs::exists(index_ / kCatalogFile)) {
    log::info("index", "{} now holds versions ({}); removing the files of its old layout",
              index_.string(), (fs::path(kVersionsDir) / std::to_string(next_)).string());
    for (const char* name : kUnversioned) fs::remove_all(index_ / name);
  }
  remove_unused_versions(version);
  remove_unused_models();
  return version;
}

void IndexWriter::remove_unused_versions(const fs::path& keep) {
  for (const auto& entry : fs::directory_iterator(index_ / kVersionsDir)) {
    if (entry.path() == keep || !version_number(entry.path().filename().string())) continue;
    if (fs::exists(entry.path() / kReaderLock)) {
      std::optional<FileLock> unused = FileLock::acquire(
          entry.path() / kReaderLock, /*exclusive=*/true, /*wait=*/false, /*create=*/false);
      if (!unused) {
        log::info("index", "keeping {}: a reader (cadclip serve?) still has it open",
                  entry.path().string());
        continue;
      }
      fs::remove_all(entry.path());  // while locked: no reader takes it meanwhile
      continue;
    }
    fs::remove_all(entry.path());
  }
}

void IndexWriter::remove_unused_models() {
  std::set<std::string> used;
  for (const auto& entry : fs::directory_iterator(index_ / kVersionsDir)) {
    if (!version_number(entry.path().filename().string())) continue;
    const Catalog catalog = Catalog::open(entry.path(), /*create=*/false);
    if (const std::optional<std::string> identity = catalog.meta("checkpoint_identity"))
      used.insert(*identity);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(index_ / kModelsDir, ec)) {
    const std::string name = entry.path().filename().string();
    if (used.contains(name) || name.find(kBuilding) != std::string::npos) continue;
    log::info("index", "removing the model {}: no version of the index uses it any more",
              entry.path().string());
    fs::remove_all(entry.path());
  }
}

// ---- readers --------------------------------------------------------------------

OpenedVersion open_current_version(const fs::path& index) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (!fs::exists(index / kCurrentFile)) {
      if (fs::exists(index / kCatalogFile)) return {index, std::nullopt};
      throw Error(
          format("{} is no cadclip index: it has neither {} nor {}; make one with "
                 "`cadclip index`",
                 index.string(), kCurrentFile, kCatalogFile));
    }
    const fs::path version = named_version(index);
    std::optional<FileLock> hold = FileLock::acquire(version / kReaderLock, /*exclusive=*/false,
                                                     /*wait=*/true, /*create=*/false);
    // A writer may have removed the version between CURRENT and the lock:
    // then CURRENT names a newer one.
    if (hold && fs::exists(version / kCatalogFile)) return {version, std::move(hold)};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw Error(
      format("{}: the version that {} names kept disappearing; is a writer replacing it "
             "in a loop? try again",
             index.string(), kCurrentFile));
}

std::string current_version_name(const fs::path& index) {
  std::error_code ec;
  if (!fs::exists(index / kCurrentFile, ec)) return "";
  try {
    return trimmed(read_text_file(index / kCurrentFile));
  } catch (const Error&) {
    return "";  // replaced while being read: the next look sees the new one
  }
}

}  // namespace cadclip::index::detail
