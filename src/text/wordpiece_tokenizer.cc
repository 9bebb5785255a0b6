#include "cadclip/text/wordpiece_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"

namespace cadclip::text {
namespace {

// The character classes of tokenizers' BertNormalizer and BertPreTokenizer
// (Rust): "other" is the Unicode category C*, whitespace the White_Space
// property, punctuation ASCII punctuation or P*.
bool is_other(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_UNASSIGNED:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool is_whitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(static_cast<UChar32>(c));
}

bool is_control(char32_t c) { return c != '\t' && c != '\n' && c != '\r' && is_other(c); }

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool is_chinese(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  int32_t i = 0;
  while (i < length) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    out.push_back(c < 0 ? 0xFFFD : static_cast<char32_t>(c));
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  uint8_t buffer[4];
  int32_t n = 0;
  UBool error = false;
  U8_APPEND(buffer, n, 4, static_cast<UChar32>(c), error);
  if (!error) out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

// NFD, then drop the non-spacing marks: BertNormalizer's strip_accents.
std::u32string strip_accents(const std::u32string& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  CADCLIP_CHECK(U_SUCCESS(status), "ICU has no NFD normaliser: {}", u_errorName(status));
  icu::UnicodeString source = icu::UnicodeString::fromUTF32(
      reinterpret_cast<const UChar32*>(text.data()), static_cast<int32_t>(text.size()));
  const icu::UnicodeString decomposed = nfd->normalize(source, status);
  CADCLIP_CHECK(U_SUCCESS(status), "ICU NFD failed: {}", u_errorName(status));
  std::u32string out;
  out.reserve(text.size());
  for (int32_t i = 0; i < decomposed.length();) {
    const UChar32 c = decomposed.char32At(i);
    i += U16_LENGTH(c);
    if (u_charType(c) != U_NON_SPACING_MARK) out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

// Rust's char::to_lowercase: the simple mapping, plus the one character whose
// full mapping has two (U+0130 -> i + combining dot).
void append_lowercase(std::u32string& out, char32_t c) {
  if (c == 0x130) {
    out.push_back(U'i');
    out.push_back(0x307);
    return;
  }
  out.push_back(static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))));
}

int64_t require_id(const std::unordered_map<std::string, int64_t>& ids, const char* token,
                   const std::string& source) {
  const auto it = ids.find(token);
  if (it == ids.end())
    throw Error(
        format("{}: the WordPiece vocabulary has no {} token; BERT vocabularies carry "
               "[PAD], [UNK], [CLS] and [SEP]",
               source, token));
  return it->second;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options,
                                       const std::string& source)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  if (vocab_.empty()) throw Error(format("{}: the WordPiece vocabulary is empty", source));
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) ids_.emplace(vocab_[i], static_cast<int64_t>(i));
  pad_id_ = require_id(ids_, "[PAD]", source);
  cls_id_ = require_id(ids_, "[CLS]", source);
  sep_id_ = require_id(ids_, "[SEP]", source);
  unk_id_ = require_id(ids_, "[UNK]", source);
}

WordPieceTokenizer WordPieceTokenizer::from_vocab_txt(const std::filesystem::path& path,
                                                      WordPieceOptions options) {
  std::ifstream in(path);
  if (!in) throw Error(format("{}: cannot read the WordPiece vocabulary", path.string()));
  std::vector<std::string> vocab;
  std::string line;
  while (std::getline(in, line)) {
    // BertTokenizer strips each line (Python's rstrip("\n") then strip()).
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    vocab.push_back(line);
  }
  return WordPieceTokenizer(std::move(vocab), std::move(options), path.string());
}

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(const std::filesystem::path& path) {
  const std::string where = path.string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{}: not valid JSON ({})", where, e.what()));
  }
  const auto& model = doc.value("model", nlohmann::json::object());
  if (model.value("type", "") != "WordPiece")
    throw Error(
        format("{}: the tokenizer model is '{}', and cadclip reads only WordPiece from "
               "tokenizer.json (SentencePiece models need their spm.model)",
               where, model.value("type", std::string("none"))));
  WordPieceOptions options;
  const auto& normalizer = doc.value("normalizer", nlohmann::json());
  if (!normalizer.is_null()) {
    if (normalizer.value("type", "") != "BertNormalizer")
      throw Error(format("{}: normalizer '{}' is not supported; cadclip implements BertNormalizer",
                         where, normalizer.value("type", std::string("?"))));
    options.lowercase = normalizer.value("lowercase", true);
    options.clean_text = normalizer.value("clean_text", true);
    options.chinese_chars = normalizer.value("handle_chinese_chars", true);
    const auto& strip = normalizer.value("strip_accents", nlohmann::json());
    options.strip_accents = strip.is_null() ? -1 : (strip.get<bool>() ? 1 : 0);
  } else {
    options.lowercase = false;
    options.clean_text = false;
    options.chinese_chars = false;
    options.strip_accents = 0;
  }
  const auto& pre = doc.value("pre_tokenizer", nlohmann::json());
  if (!pre.is_null() && pre.value("type", "") != "BertPreTokenizer")
    throw Error(
        format("{}: pre-tokenizer '{}' is not supported; cadclip implements "
               "BertPreTokenizer",
               where, pre.value("type", std::string("?"))));
  options.prefix = model.value("continuing_subword_prefix", std::string("##"));
  options.max_chars_per_word = model.value("max_input_chars_per_word", 100);
  const auto& map = model.value("vocab", nlohmann::json::object());
  std::vector<std::string> vocab(map.size());
  for (const auto& [token, id] : map.items()) {
    const int64_t i = id.get<int64_t>();
    if (i < 0 || i >= static_cast<int64_t>(vocab.size()) || !vocab[i].empty())
      throw Error(
          format("{}: WordPiece id {} of '{}' is out of range or used twice", where, i, token));
    vocab[i] = token;
  }
  return WordPieceTokenizer(std::move(vocab), std::move(options), where);
}

void WordPieceTokenizer::add_word(const std::u32string& word, std::vector<int64_t>& out) const {
  if (static_cast<int64_t>(word.size()) > options_.max_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  // Byte offsets of every character, so that candidates are substrings.
  std::string utf8;
  std::vector<size_t> offset;
  offset.reserve(word.size() + 1);
  for (char32_t c : word) {
    offset.push_back(utf8.size());
    append_utf8(utf8, c);
  }
  offset.push_back(utf8.size());
  const size_t first = out.size();
  std::string candidate;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int64_t found = -1;
    while (end > start) {
      candidate.assign(start > 0 ? options_.prefix : std::string());
      candidate.append(utf8, offset[start], offset[end] - offset[start]);
      const auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

std::vector<int64_t> WordPieceTokenizer::pieces(std::string_view text) const {
  const std::u32string input = decode_utf8(text);
  // Normalise: clean, pad CJK, strip accents, lower-case (BertNormalizer's order).
  std::u32string normal;
  normal.reserve(input.size());
  for (char32_t c : input) {
    if (options_.clean_text) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = U' ';
    }
    if (options_.chinese_chars && is_chinese(c)) {
      normal.push_back(U' ');
      normal.push_back(c);
      normal.push_back(U' ');
    } else {
      normal.push_back(c);
    }
  }
  const bool strip = options_.strip_accents < 0 ? options_.lowercase : options_.strip_accents > 0;
  if (strip) normal = strip_accents(normal);
  if (options_.lowercase) {
    std::u32string lower;
    lower.reserve(normal.size());
    for (char32_t c : normal) append_lowercase(lower, c);
    normal = std::move(lower);
  }
  // Split on whitespace and around every punctuation character.
  std::vector<int64_t> out;
  std::u32string word;
  auto flush = [&] {
    if (!word.empty()) add_word(word, out);
    word.clear();
  };
  for (char32_t c : normal) {
    if (is_whitespace(c)) {
      flush();
    } else if (is_punctuation(c)) {
      flush();
      word.push_back(c);
      flush();
    } else {
      word.push_back(c);
    }
  }
  flush();
  return out;
}

std::vector<int64_t> WordPieceTokenizer::encode(std::string_view text, int64_t max_length) const {
  if (max_length != 0 && max_length < 2)
    throw Error(format("max_length {} leaves no room for [CLS] and [SEP]; use 0 (no limit) or >= 2",
                       max_length));
  std::vector<int64_t> body = pieces(text);
  if (max_length > 0 && static_cast<int64_t>(body.size()) > max_length - 2)
    body.resize(static_cast<size_t>(max_length - 2));
  std::vector<int64_t> ids;
  ids.reserve(body.size() + 2);
  ids.push_back(cls_id_);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.push_back(sep_id_);
  return ids;
}

}  // namespace cadclip::text
