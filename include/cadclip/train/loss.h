// Contrastive losses over the global batch of every process: symmetric
// InfoNCE (CLIP) or SigLIP, with false negatives kept out of the negatives.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cadclip/train/communicator.h"

namespace cadclip::train {

enum class LossKind { kInfoNce, kSigLip };
// "infonce" / "siglip", as the command line and options.json spell them;
// parse_loss_kind throws cadclip::Error naming the value otherwise.
std::string_view loss_kind_name(LossKind kind);
LossKind parse_loss_kind(std::string_view name);
void to_json(nlohmann::json& json, LossKind kind);
void from_json(const nlohmann::json& json, LossKind& kind);

// One process's share of a step. Rows may differ in number between ranks
// (the uneven last batch): they are padded, gathered and masked, and the loss
// is normalised by the true global count.
struct ContrastivePairs {
  at::Tensor text;          // [b, d] L2-normalised caption embeddings
  at::Tensor cad;           // [b, d] L2-normalised solid embeddings, row i pairs with text row i
  at::Tensor caption_key;   // [b] int64: equal keys = captions stating the same facts
  at::Tensor geometry_key;  // [b] int64: equal keys = the same geometry (geometry hash)
};

// Extra negatives from a momentum queue (single process; see momentum_queue.h):
// embeddings of earlier batches made by the momentum encoders, without
// gradient, with their keys for false-negative masking.
struct QueueNegatives {
  at::Tensor text;          // [k, d] L2-normalised caption embeddings
  at::Tensor cad;           // [k, d] L2-normalised solid embeddings
  at::Tensor caption_key;   // [k] int64
  at::Tensor geometry_key;  // [k] int64
};

struct LossOptions {
  LossKind kind = LossKind::kInfoNce;
  // Pairs (i != j) with an equal caption or geometry key are not negatives:
  // they are masked out of the denominator (InfoNCE) or the sum (SigLIP).
  // The diagonal is never masked, so no row can become all -inf.
  bool mask_false_negatives = true;
};

struct LossResult {
  at::Tensor loss;           // scalar, the same value on every rank
  int64_t global_count = 0;  // pairs in the global batch
  int64_t masked_pairs = 0;  // off-diagonal pairs kept out as false negatives
  int64_t masked_queue = 0;  // (batch row, queue row) pairs kept out as false negatives
};

// logit_scale: scalar, already exp'd and clamped (the temperature's inverse).
// logit_bias: scalar, used by SigLIP only (undefined for InfoNCE).
// Every rank computes the whole global loss; with all_gather_with_grad and
// gradients averaged afterwards, parameters get the single-process gradient.
//
// With `queue` (non-empty, world size 1 only): InfoNCE's text->CAD row i is a
// softmax over [cad of the batch; queue.cad] and CAD->text row i over [text of
// the batch; queue.text], the target still the batch's diagonal; a queue row
// whose caption or geometry key equals row i's is masked out of the
// denominator (the positive never is). SigLIP adds every unmasked queue row as
// a negative term for both directions (still normalised by the batch count).
LossResult contrastive_loss(Communicator& communicator, const ContrastivePairs& local,
                            const at::Tensor& logit_scale, const at::Tensor& logit_bias,
                            const LossOptions& options, const QueueNegatives* queue = nullptr);

// [n] and [k] int64 keys -> [n, k] bool, true where a batch row and a queue
// row share a caption or geometry key.
at::Tensor queue_false_negative_mask(const at::Tensor& caption_key, const at::Tensor& geometry_key,
                                     const at::Tensor& queue_caption_key,
                                     const at::Tensor& queue_geometry_key);

// The caption key of ContrastivePairs: a hash of the caption's facts (the
// canonical JSON of data::Caption::facts) when it has a non-empty facts
// object, else of its text, whitespace-insensitive. Captions that state the
// same facts in other words share a key; an empty facts object ({}: a vague
// caption that states nothing checkable) says nothing about sameness, so the
// text decides. Facts and text keys are hashed apart and never collide by design.
int64_t caption_key(const std::string& text, const std::string& facts);
// The geometry key: the first 16 hex digits of a geometry hash; `fallback`
// (a key no other sample has) when the hash is missing or shorter.
int64_t geometry_key(const std::string& geometry_hash_hex, int64_t fallback);

// [n] int64 keys -> [n, n] bool, true where i != j and a key is shared.
at::Tensor false_negative_mask(const at::Tensor& caption_key, const at::Tensor& geometry_key);

}  // namespace cadclip::train
