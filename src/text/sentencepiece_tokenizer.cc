#include "cadclip/text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <limits>

#include "cadclip/core/error.h"

namespace cadclip::text {

SentencePieceTokenizer::SentencePieceTokenizer(const std::filesystem::path& model_file)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  const auto status = processor_->Load(model_file.string());
  if (!status.ok())
    throw Error(
        format("{}: not a readable SentencePiece model ({}); DeBERTa-v2/v3 folders "
               "carry the spm.model of their checkpoint",
               model_file.string(), status.ToString()));
  pieces_ = processor_->GetPieceSize();
  // PieceToId answers unk_id for a piece it lacks, so check the way back too.
  auto id_of = [&](const char* piece) -> int64_t {
    const int id = processor_->PieceToId(piece);
    if (processor_->IdToPiece(id) != piece)
      throw Error(
          format("{}: the SentencePiece model has no {} piece; cadclip expects DeBERTa's "
                 "special pieces [PAD], [CLS], [SEP], [UNK]",
                 model_file.string(), piece));
    return id;
  };
  pad_id_ = id_of("[PAD]");
  cls_id_ = id_of("[CLS]");
  sep_id_ = id_of("[SEP]");
  unk_id_ = processor_->unk_id();
  float lowest = std::numeric_limits<float>::max();
  for (int id = 0; id < pieces_; ++id) {
    if (processor_->IsControl(id) || processor_->IsUnknown(id) || processor_->IsUnused(id))
      continue;
    const std::string& piece = processor_->IdToPiece(id);
    piece_ids_.emplace(piece, id);
    longest_piece_ = std::max(longest_piece_, piece.size());
    lowest = std::min(lowest, processor_->GetScore(id));
  }
  // SentencePiece's kUnkPenalty.
  unknown_score_ = lowest - 10.0f;
}

void SentencePieceTokenizer::segment(const std::string& normalized,
                                     std::vector<int64_t>& out) const {
  // SentencePiece's EncodeOptimized: best path ending at each byte; pieces
  // starting at a position are tried shortest first and replace the current
  // best only when strictly better, which decides ties.
  struct Node {
    int id = -1;
    float score = 0;
    int64_t starts_at = -1;
  };
  const int64_t size = static_cast<int64_t>(normalized.size());
  std::vector<Node> best(static_cast<size_t>(size) + 1);
  std::string candidate;
  int64_t start = 0;
  while (start < size) {
    const float here = best[start].score;
    const auto lead = static_cast<unsigned char>(normalized[start]);
    const int64_t char_len =
        std::min<int64_t>("\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[lead >> 4], size - start);
    bool single_char_piece = false;
    const int64_t last = std::min<int64_t>(size, start + static_cast<int64_t>(longest_piece_));
    for (int64_t end = start + 1; end <= last; ++end) {
      candidate.assign(normalized, start, end - start);
      const auto it = piece_ids_.find(candidate);
      if (it == piece_ids_.end()) continue;
      Node& node = best[end];
      const float score = processor_->GetScore(it->second) + here;
      if (node.starts_at == -1 || score > node.score) node = {it->second, score, start};
      if (end - start == char_len) single_char_piece = true;
    }
    if (!single_char_piece) {
      Node& node = best[start + char_len];
      const float score = unknown_score_ + here;
      if (node.starts_at == -1 || score > node.score)
        node = {static_cast<int>(unk_id_), score, start};
    }
    start += char_len;
  }
  std::vector<int64_t> ids;
  for (int64_t end = size; end > 0; end = best[end].starts_at) {
    CADCLIP_CHECK(best[end].starts_at >= 0, "broken SentencePiece lattice at byte {}", end);
    ids.push_back(best[end].id);
  }
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    // SentencePiece reports a run of unknown characters as one piece.
    if (*it == unk_id_ && !out.empty() && out.back() == unk_id_) continue;
    out.push_back(*it);
  }
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int64_t> SentencePieceTokenizer::encode(std::string_view text,
                                                    int64_t max_length) const {
  if (max_length != 0 && max_length < 2)
    throw Error(format("max_length {} leaves no room for [CLS] and [SEP]; use 0 (no limit) or >= 2",
                       max_length));
  // SentencePiece normalises; its pieces joined give the normalised text.
  const sentencepiece::ImmutableSentencePieceText encoded =
      processor_->EncodeAsImmutableProto(text);
  std::string normalized;
  for (size_t i = 0; i < encoded.pieces_size(); ++i)
    normalized += encoded.pieces(static_cast<int>(i)).piece();
  std::vector<int64_t> pieces;
  segment(normalized, pieces);
  size_t keep = pieces.size();
  if (max_length > 0) keep = std::min(keep, static_cast<size_t>(max_length - 2));
  std::vector<int64_t> ids;
  ids.reserve(keep + 2);
  ids.push_back(cls_id_);
  ids.insert(ids.end(), pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(keep));
  ids.push_back(sep_id_);
  return ids;
}

}  // namespace cadclip::text
