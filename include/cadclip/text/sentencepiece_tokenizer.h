// DeBERTa-v2/v3's tokenizer: a SentencePiece model (spm.model) with the ids
// of transformers' SentencePiece-based DebertaV2Tokenizer: [PAD]=0 [CLS]=1
// [SEP]=2 [UNK]=3 from the model, [MASK] added after the vocabulary.
// SentencePiece normalises the text (the model's own rules, nmt_nfkc for
// DeBERTa-v3); the Viterbi segmentation is cadclip's, with the tie-breaking
// of SentencePiece 0.2 (which transformers' references use), so that ids do
// not depend on the system library's version.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include "cadclip/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace cadclip::text {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Throws cadclip::Error naming the file when it is not a SentencePiece
  // model or lacks [CLS], [SEP] or [PAD].
  explicit SentencePieceTokenizer(const std::filesystem::path& model_file);
  ~SentencePieceTokenizer() override;

  std::vector<int64_t> encode(std::string_view text, int64_t max_length = 0) const override;
  // The SentencePiece pieces plus the added [MASK].
  int64_t vocab_size() const override { return pieces_ + 1; }
  int64_t pad_id() const override { return pad_id_; }
  int64_t cls_id() const override { return cls_id_; }
  int64_t sep_id() const override { return sep_id_; }
  int64_t unk_id() const override { return unk_id_; }
  int64_t mask_id() const { return pieces_; }
  std::string_view kind() const override { return "sentencepiece"; }

 private:
  // Best-scoring segmentation of `normalized` (SentencePiece's text with
  // U+2581 for spaces) into piece ids, consecutive unknowns merged.
  void segment(const std::string& normalized, std::vector<int64_t>& out) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::unordered_map<std::string, int> piece_ids_;  // pieces a text can match
  size_t longest_piece_ = 0;                        // in bytes
  float unknown_score_ = 0;                         // lowest score - 10
  int64_t pieces_ = 0;
  int64_t pad_id_ = 0, cls_id_ = 1, sep_id_ = 2, unk_id_ = 3;
};

}  // namespace cadclip::text
