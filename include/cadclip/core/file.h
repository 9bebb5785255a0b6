// Whole-file helpers: atomic replacement and reading, with errors that name
// the file.
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

}  // namespace cadclip
