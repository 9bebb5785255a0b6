#include "cad/input_checks.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "cadclip/core/format.h"
#include "cadclip/data/utf8.h"

namespace cadclip::cad {

using data::FailureKind;
using data::IngestFailure;

std::optional<IngestFailure> stat_input(const std::filesystem::path& path, FileFacts& facts) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return IngestFailure{FailureKind::kUnreadable,
                         format("cannot read {}: {}", path.string(), std::strerror(errno))};
  facts.size = static_cast<uint64_t>(st.st_size);
  facts.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return std::nullopt;
}

std::optional<IngestFailure> check_id(const std::string& id) {
  if (!data::first_invalid_utf8(id)) return std::nullopt;
  return IngestFailure{FailureKind::kBadName,
                       "the file name is not UTF-8, so it cannot be a model id; rename it"};
}

std::optional<IngestFailure> check_size(uint64_t size, double max_file_mb) {
  if (max_file_mb <= 0 || static_cast<double>(size) <= max_file_mb * 1024 * 1024)
    return std::nullopt;
  return IngestFailure{
      FailureKind::kTooLarge,
      format("the file is {}, over the limit of {} MiB (--max-file-mb, max_file_mb "
             "in Python; 0 = no limit)",
             human_bytes(size), max_file_mb)};
}

}  // namespace cadclip::cad
