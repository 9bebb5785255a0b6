// The index folder as a set of versions swapped in atomically, one writer at
// a time, so that readers never see half an update (private to the index layer):
//
//   INDEX/CURRENT                 "versions/<n>": the version readers open; replaced atomically
//   INDEX/lock                    held (flock) by the one writer; holds its pid
//   INDEX/versions/<n>/           catalog.sqlite, vectors.faiss, thumbnails/, failures.jsonl,
//                                 warnings.jsonl, options.json, and reader.lock, which every
//                                 reader of the version holds shared
//   INDEX/versions/<n>.building-<pid>/   a version being written; left by a killed writer, it is
//                                 removed by the next one
//   INDEX/models/<sha256>/        the model a version searches with (model.safetensors,
//                                 config.json, text/), named by its weights' identity
//                                 (model::checkpoint_identity), so that versions of one model
//                                 share a copy and the folder opens wherever it is moved
//
// A writer builds the next version beside the current one and makes it
// current by replacing CURRENT; then it removes the versions no reader holds,
// and the models no version left names.
// An index made before versions (catalog.sqlite at the top of INDEX) is read
// as it is, and the next `cadclip index` turns it into versions/1.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "cadclip/core/file.h"

namespace cadclip::index::detail {

inline constexpr const char* kCurrentFile = "CURRENT";
inline constexpr const char* kLockFile = "lock";
inline constexpr const char* kVersionsDir = "versions";
inline constexpr const char* kReaderLock = "reader.lock";
inline constexpr const char* kModelsDir = "models";

// Where the index `index` keeps the model of weights `identity`.
std::filesystem::path model_folder(const std::filesystem::path& index, const std::string& identity);

// An flock() on a file, released when destroyed (or moved from).
class FileLock {
 public:
  // Waits for the lock when `wait`; nullopt when it is held elsewhere and not
  // `wait`, or when the file is missing and not `create`.
  static std::optional<FileLock> acquire(const std::filesystem::path& file, bool exclusive,
                                         bool wait, bool create = true);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  int fd() const { return fd_; }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The one writer of an index folder. Throws cadclip::Error naming the pid of
// another writer that holds the folder (unless `wait`, which waits for it).
class IndexWriter {
 public:
  static IndexWriter open(const std::filesystem::path& index, bool wait);
  IndexWriter(IndexWriter&&) noexcept = default;

  // The folder of the version readers open now: nullopt when INDEX holds no
  // index yet, INDEX itself for an index made before versions.
  std::optional<std::filesystem::path> current() const;
  // An empty folder for the next version.
  std::filesystem::path begin_version();
  // Makes model_folder(index, identity) hold the model of `checkpoint`
  // (copied whole, then renamed into place; a copy whose weights are not
  // `identity` any more is replaced). Called before commit_version, so that
  // no version is current without its model.
  void store_model(const std::filesystem::path& checkpoint, const std::string& identity);
  // Makes the version written into begin_version()'s folder the current one,
  // then removes the versions (and an index made before versions) that no
  // reader holds. Returns the version's folder.
  std::filesystem::path commit_version();

 private:
  IndexWriter(std::filesystem::path index, FileLock lock)
      : index_(std::move(index)), lock_(std::move(lock)) {}
  void remove_unused_versions(const std::filesystem::path& keep);
  // Removes the models that no version left in versions/ was made with.
  void remove_unused_models();

  std::filesystem::path index_;
  FileLock lock_;
  // begin_version()'s folder until committed; a failed build's goes with
  // the writer, and the current version stays as it was.
  ScratchDir staging_;
  int64_t next_ = 0;
};

// The version a reader opened, held until this is destroyed: a writer never
// removes it meanwhile.
struct OpenedVersion {
  std::filesystem::path folder;  // where its catalog, vectors and thumbnails are
  std::optional<FileLock> hold;  // none for an index made before versions
};

// Throws cadclip::Error naming `index` when it holds no index.
OpenedVersion open_current_version(const std::filesystem::path& index);

// What CURRENT names now ("versions/3"); "" for an index made before versions
// or a folder that holds no index (yet).
std::string current_version_name(const std::filesystem::path& index);

}  // namespace cadclip::index::detail
