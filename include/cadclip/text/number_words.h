// Number words ("eight", "Forty"), the one table that captions' quantities
// (text/quantities.h) and the counts a search query states read alike.
// Free of LibTorch, so that the query reader's fuzzer builds without it.
#pragma once

#include <optional>
#include <string_view>

namespace cadclip::text {

// The value of a number word, zero to twenty or a ten ("Eight" -> 8, "forty"
// -> 40), in any letter case; nullopt for any other word.
std::optional<int> number_word(std::string_view word);

}  // namespace cadclip::text
