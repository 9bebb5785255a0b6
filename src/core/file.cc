#include "cadclip/core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "cadclip/core/error.h"

namespace cadclip {
namespace {
std::string errno_text() { return std::strerror(errno); }

void sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // Not every file system lets a folder be opened; the rename stands.
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

void write_file_atomic(const std::filesystem::path& path,
                       const std::function<void(std::FILE* out)>& fill) {
  const std::filesystem::path folder = path.parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder);
  std::string temp = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    throw Error(
        format("cannot create a temporary file beside {}: {}; check that the folder is "
               "writable",
               path.string(), errno_text()));
  }
  std::FILE* out = ::fdopen(fd, "wb");
  if (out == nullptr) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw Error(format("cannot open {} for writing: {}", temp, errno_text()));
  }
  try {
    fill(out);
  } catch (...) {
    std::fclose(out);
    ::unlink(temp.c_str());
    throw;
  }
  const bool written = std::fflush(out) == 0 && ::fsync(fd) == 0 && !std::ferror(out);
  const std::string reason = written ? "" : errno_text();
  if (std::fclose(out) != 0 || !written) {
    ::unlink(temp.c_str());
    throw Error(format("writing {} failed: {}; check free disk space", path.string(), reason));
  }
  // mkstemp creates the file as 0600; give it the usual permissions.
  ::chmod(temp.c_str(), 0644);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    throw Error(format("cannot move {} into place as {}: {}", temp, path.string(), why));
  }
  sync_folder(folder);
}

void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  write_file_atomic(path, [&](std::FILE* out) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
      throw Error(
          format("writing {} failed: {}; check free disk space", path.string(), errno_text()));
    }
  });
}

void write_text_atomic(const std::filesystem::path& path, const std::string& text) {
  write_file_atomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(format("cannot open {}: {}", path.string(), errno_text()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(format("reading {} failed: {}", path.string(), errno_text()));
  return text.str();
}

ScratchDir::ScratchDir(std::filesystem::path path) : path_(std::move(path)) {
  std::filesystem::create_directories(path_);
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

ScratchDir& ScratchDir::operator=(ScratchDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

ScratchDir::~ScratchDir() { remove(); }

void ScratchDir::remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

}  // namespace cadclip
