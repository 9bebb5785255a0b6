// Text to token ids for the text encoders: one interface over SentencePiece
// (DeBERTa-v2/v3) and WordPiece (BERT), and batching with padding,
// truncation and attention masks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::text {

// A padded batch, row-major: ids and mask are [batch, length].
struct TokenBatch {
  int64_t batch = 0;
  int64_t length = 0;            // the longest row (padding goes to the right)
  std::vector<int64_t> ids;      // [batch, length], pad_id after each row's end
  std::vector<int64_t> mask;     // [batch, length], 1 on tokens, 0 on padding
  std::vector<int64_t> lengths;  // [batch], tokens per row including [CLS]/[SEP]
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // `[CLS] pieces [SEP]`; with max_length > 0 the pieces are cut so that the
  // whole is at most max_length ids (>= 2), keeping the first ones, as
  // transformers' truncation=True does for one text.
  virtual std::vector<int64_t> encode(std::string_view text, int64_t max_length = 0) const = 0;

  virtual int64_t vocab_size() const = 0;  // ids are in [0, vocab_size)
  virtual int64_t pad_id() const = 0;
  virtual int64_t cls_id() const = 0;
  virtual int64_t sep_id() const = 0;
  virtual int64_t unk_id() const = 0;
  virtual std::string_view kind() const = 0;  // "sentencepiece" or "wordpiece"

  // Encodes every text and pads the rows to the longest one.
  TokenBatch batch(std::span<const std::string> texts, int64_t max_length = 0) const;
};

// The tokenizer of a Hugging Face model folder: spm.model (SentencePiece),
// else vocab.txt (WordPiece, options from tokenizer_config.json), else a
// WordPiece tokenizer.json. Throws cadclip::Error naming the folder when none
// of them is there or one is malformed.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& folder);

}  // namespace cadclip::text
