// Whole-file helpers: atomic replacement and reading, with errors that name
// the file; a scratch folder that removes itself.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

namespace cadclip {

// Writes `path` so that a crash at any moment leaves either the old file or
// the new one, never a mix: the bytes go to a temporary file in the same
// folder, which is flushed to disk and then renamed over `path`. `fill` is
// called with a writer for the temporary file. Throws cadclip::Error.
void write_file_atomic(const std::filesystem::path& path,
                       const std::function<void(std::FILE* out)>& fill);
void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes);
void write_text_atomic(const std::filesystem::path& path, const std::string& text);

// Throws cadclip::Error naming the file when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// A folder of scratch files, removed with everything in it when this goes out
// of scope (what cannot be removed is left: it is scratch), unless released.
class ScratchDir {
 public:
  ScratchDir() = default;  // holds no folder
  // Creates `path` and its parents (an existing folder is taken as it is).
  // Throws std::filesystem::filesystem_error when it cannot be created.
  explicit ScratchDir(std::filesystem::path path);
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&& other) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::filesystem::path& path() const { return path_; }  // empty when it holds none
  // The folder stays (it was renamed into place, or is kept on purpose).
  void release() { path_.clear(); }

 private:
  void remove();
  std::filesystem::path path_;
};

}  // namespace cadclip
