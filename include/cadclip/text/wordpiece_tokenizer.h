// BERT's WordPiece tokenizer, equal to transformers' BertTokenizer: text
// cleaning, CJK padding, optional accent stripping and lower-casing,
// whitespace and punctuation splitting, greedy longest match with "##".
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "cadclip/text/tokenizer.h"

namespace cadclip::text {

struct WordPieceOptions {
  bool lowercase = true;         // do_lower_case
  int strip_accents = -1;        // 1 strip, 0 keep, -1 follow `lowercase` (BERT's default)
  bool clean_text = true;        // drop control characters, map whitespace to ' '
  bool chinese_chars = true;     // tokenize_chinese_chars: a CJK ideograph is a word
  int max_chars_per_word = 100;  // longer words become [UNK]
  std::string prefix = "##";     // marks a piece that continues a word
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // `vocab[i]` is the piece of id i. Throws cadclip::Error when [CLS],
  // [SEP], [PAD] or [UNK] is missing (`source` names the file in messages).
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options,
                     const std::string& source);

  // vocab.txt, one piece per line.
  static WordPieceTokenizer from_vocab_txt(const std::filesystem::path& path,
                                           WordPieceOptions options);
  // A tokenizers' tokenizer.json whose model is WordPiece (options from its
  // BertNormalizer and model sections).
  static WordPieceTokenizer from_tokenizer_json(const std::filesystem::path& path);

  std::vector<int64_t> encode(std::string_view text, int64_t max_length = 0) const override;
  // The word pieces without [CLS]/[SEP].
  std::vector<int64_t> pieces(std::string_view text) const;
  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.size()); }
  int64_t pad_id() const override { return pad_id_; }
  int64_t cls_id() const override { return cls_id_; }
  int64_t sep_id() const override { return sep_id_; }
  int64_t unk_id() const override { return unk_id_; }
  std::string_view kind() const override { return "wordpiece"; }
  const WordPieceOptions& options() const { return options_; }

 private:
  void add_word(const std::u32string& word, std::vector<int64_t>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int64_t> ids_;
  WordPieceOptions options_;
  int64_t pad_id_ = 0, cls_id_ = 0, sep_id_ = 0, unk_id_ = 0;
};

}  // namespace cadclip::text
