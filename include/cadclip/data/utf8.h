// UTF-8 validation for text that crosses a file boundary (captions, ids):
// JSON output needs valid UTF-8, and a bad byte must be reported, not passed on.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cadclip::data {

// The byte offset of the first byte that does not belong to a well-formed
// UTF-8 sequence (overlong forms, surrogates and values past U+10FFFF count
// as malformed); nullopt when `text` is valid.
std::optional<size_t> first_invalid_utf8(std::string_view text);

}  // namespace cadclip::data
