#include "cadclip/text/tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/text/sentencepiece_tokenizer.h"
#include "cadclip/text/wordpiece_tokenizer.h"

namespace cadclip::text {

TokenBatch Tokenizer::batch(std::span<const std::string> texts, int64_t max_length) const {
  std::vector<std::vector<int64_t>> rows;
  rows.reserve(texts.size());
  TokenBatch out;
  out.batch = static_cast<int64_t>(texts.size());
  for (const std::string& text : texts) {
    rows.push_back(encode(text, max_length));
    out.length = std::max(out.length, static_cast<int64_t>(rows.back().size()));
    out.lengths.push_back(static_cast<int64_t>(rows.back().size()));
  }
  out.ids.assign(static_cast<size_t>(out.batch * out.length), pad_id());
  out.mask.assign(out.ids.size(), 0);
  for (size_t row = 0; row < rows.size(); ++row) {
    const size_t base = row * static_cast<size_t>(out.length);
    std::copy(rows[row].begin(), rows[row].end(), out.ids.begin() + static_cast<ptrdiff_t>(base));
    std::fill_n(out.mask.begin() + static_cast<ptrdiff_t>(base), rows[row].size(), 1);
  }
  return out;
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  if (fs::exists(folder / "spm.model"))
    return std::make_unique<SentencePieceTokenizer>(folder / "spm.model");
  if (fs::exists(folder / "vocab.txt")) {
    WordPieceOptions options;
    const fs::path config_path = folder / "tokenizer_config.json";
    if (fs::exists(config_path)) {
      nlohmann::json config;
      try {
        config = nlohmann::json::parse(read_text_file(config_path));
      } catch (const nlohmann::json::exception& e) {
        throw Error(format("{}: not valid JSON ({})", config_path.string(), e.what()));
      }
      options.lowercase = config.value("do_lower_case", true);
      const auto& strip = config.value("strip_accents", nlohmann::json());
      options.strip_accents = strip.is_null() ? -1 : (strip.get<bool>() ? 1 : 0);
      options.chinese_chars = config.value("tokenize_chinese_chars", true);
    }
    return std::make_unique<WordPieceTokenizer>(
        WordPieceTokenizer::from_vocab_txt(folder / "vocab.txt", options));
  }
  if (fs::exists(folder / "tokenizer.json"))
    return std::make_unique<WordPieceTokenizer>(
        WordPieceTokenizer::from_tokenizer_json(folder / "tokenizer.json"));
  throw Error(
      format("{}: no tokenizer found; a text model folder needs spm.model (DeBERTa), "
             "vocab.txt or a WordPiece tokenizer.json (BERT)",
             folder.string()));
}

}  // namespace cadclip::text
