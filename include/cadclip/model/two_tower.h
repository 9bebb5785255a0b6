// The two-tower model: the B-Rep encoder and a text encoder, each followed by
// a linear head to a shared size, L2-normalised, plus the learnable
// temperature of the contrastive loss.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "cadclip/data/batch.h"
#include "cadclip/model/brep_encoder.h"
#include "cadclip/model/pooled_text.h"
#include "cadclip/model/quantity_encoder.h"
#include "cadclip/model/size_head.h"
#include "cadclip/text/quantities.h"

namespace cadclip::model {

// Where a text lands in the shared space (docs/MODEL.md, "The text space").
enum class TextSpace {
  kHead,      // "head": a trained head (hidden layer, quantity branch) maps the pooled features
  kLocked,    // "locked": the pretrained sentence embedding itself, nothing trained on the
              // text side; the B-Rep tower learns to land there (LiT, Zhai et al. 2022)
  kResidual,  // "residual": the pretrained embedding plus a trained head's correction that
              // starts at zero, so training begins in the locked space and leaves it only
              // as far as the loss pulls (weight decay pulls back)
};
// "head", "locked" or "residual" -> the TextSpace; throws cadclip::Error otherwise.
TextSpace parse_text_space(const std::string& name);
std::string text_space_name(TextSpace space);

struct TwoTowerOptions {
  int64_t embed_dim = 256;         // shared embedding size of both heads; locked and residual
                                   // spaces need the text tower's width (384 for MiniLM-L6)
  double init_temperature = 0.07;  // logit scale starts at 1 / this (14.29)
  double max_logit_scale = 100.0;  // the logit scale never exceeds this
  // 0: the text head is one linear map. > 0: a hidden layer of this width with
  // GELU first. A frozen sentence encoder's pooled vector holds sizes and counts
  // only nonlinearly (docs/MODEL.md: a probe of log part sizes from frozen
  // MiniLM features, R^2 0.5 linear, 0.75 with one hidden layer).
  int64_t text_head_hidden = 512;
  // > 0: the quantity branch (model/quantity_encoder.h) with this width reads
  // the numbers of each caption, and the text head sees its output beside the
  // pooled features. 0: no branch; the text head sees the pooled features only.
  int64_t quantity_width = 128;
  // Precision of the text tower's forward: kFloat (fp32), kBFloat16 or kHalf
  // (autocast on the input's device). The B-Rep tower and both heads are fp32.
  c10::ScalarType text_precision = c10::kFloat;
  TextSpace text_space = TextSpace::kHead;  // how texts map into the shared space
  // > 0: the size block (model/size_head.h) with bins of 1/this decade: what
  // search compares is the embedding and the block, search_dim() wide. 0:
  // none. `cadclip fit-sizes` fits it on a trained model; training leaves it out.
  int64_t size_bins_per_decade = 0;
  double size_weight = 0.2;  // the block's weight beside the cosine (chosen on validation)
  // The size block's fourth side: the part's central bore (model/size_head.h),
  // with a weight of its own (both chosen on validation by fit-sizes).
  bool size_bore = false;
  double size_bore_weight = 0.2;
  // Whether the size head's means point at the caption's stated numbers
  // (model/size_head.h, SizeHeadImpl::pointer_mean).
  bool size_pointer = false;

  // Throws cadclip::Error naming the field when a value is out of range.
  void validate() const;
};

// Both towers' normalised embeddings and the logit scale.
struct TwoTowerOutput {
  torch::Tensor brep;         // [B, embed_dim] fp32, unit rows
  torch::Tensor text;         // [B, embed_dim] fp32, unit rows
  torch::Tensor logit_scale;  // [] fp32, exp(log_logit_scale) clamped at max_logit_scale
};

class TwoTowerImpl : public torch::nn::Module {
 public:
  // `text` is any module whose forward(input_ids [B, L] int64,
  // attention_mask [B, L] int64) returns pooled embeddings [B, text_width];
  // it is registered as the submodule "text" (its parameters are named
  // "text.*"). The B-Rep encoder is "brep".
  TwoTowerImpl(BRepEncoder brep, torch::nn::AnyModule text, int64_t text_width,
               const TwoTowerOptions& options = {});

  // batch: on this module's device -> [B, embed_dim], unit rows, fp32.
  torch::Tensor encode_brep(const data::BRepBatch& batch);
  // graphs -> [B, embed_dim] in the given order: encode_brep(collate(graphs))
  // computed group by group on this module's device (BRepEncoder::forward_graphs).
  // What the trainer, eval and index use.
  torch::Tensor encode_brep(std::span<const data::BRepGraph* const> graphs);
  torch::Tensor encode_brep(const std::vector<data::BRepGraph>& graphs);
  // The same from graphs collated beforehand (data::collate_groups), on any device.
  torch::Tensor encode_brep(const data::GroupedBatch& batch);
  // -> [B, embed_dim], unit rows, fp32: project_text(pool_text(...), quantities).
  // `quantities` (text::quantity_batch of the same texts, on this module's
  // device) is required when options().quantity_width > 0 and ignored otherwise.
  torch::Tensor encode_text(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                            const text::QuantityBatch& quantities = {});
  // The text tower alone (in text_precision): [B, L] ids and mask -> pooled [B, text_width].
  torch::Tensor pool_text(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);
  // The text tower split before its layer `first`, for a run that trains only
  // the layers from there (train/text_cache.h): the hidden states entering
  // it [B, L, width] fp32, and the pooled features from those; pool_text is
  // pool_text_from(text_hidden_before(ids, mask, first), mask, first). Both in
  // text_precision; they need a PooledText tower (throw cadclip::Error otherwise).
  torch::Tensor text_hidden_before(const torch::Tensor& input_ids,
                                   const torch::Tensor& attention_mask, int64_t first);
  torch::Tensor pool_text_from(const torch::Tensor& hidden, const torch::Tensor& attention_mask,
                               int64_t first);
  // The text head on pooled features [B, text_width] (and the quantity
  // branch on `quantities`) -> [B, embed_dim], unit rows, fp32. With a frozen
  // text tower, the trainer feeds it cached pool_text outputs.
  torch::Tensor project_text(const torch::Tensor& pooled,
                             const text::QuantityBatch& quantities = {});
  TwoTowerOutput forward(const data::BRepBatch& batch, const torch::Tensor& input_ids,
                         const torch::Tensor& attention_mask,
                         const text::QuantityBatch& quantities = {});
  // What search compares, parts and texts alike: the embedding, then the size
  // block scaled by sqrt(size_weight) when a size head is built (so that
  // the inner product is cosine + size_weight * p . q; the bore side by
  // sqrt(size_bore_weight)). search_dim() is
  // embed_dim plus the block's width.
  int64_t search_dim() const;
  // graphs -> [B, search_dim()]: encode_brep and the size block of their boxes.
  torch::Tensor embed_parts(std::span<const data::BRepGraph* const> graphs);
  torch::Tensor embed_parts(const std::vector<data::BRepGraph>& graphs);
  // Text embeddings [n, embed_dim] of `texts` (in order) -> [n, search_dim()]:
  // the size block the head reads from each text and its embedding, zeros for
  // a text that states no number. Without a size head, `embedded` itself.
  torch::Tensor with_text_sizes(const torch::Tensor& embedded, std::span<const std::string> texts);
  // Parts' search rows [n, search_dim()] as queries for other parts: the size
  // block zeroed, so that parts compare by shape (search's --same-size
  // compares sizes).
  torch::Tensor as_part_query(const torch::Tensor& parts) const;
  // Gives the model a fresh size head (replacing one it has) with bins of
  // 1/bins_per_decade decade, with or without the bore side and the pointer
  // (model/size_head.h), and sets the block's weight, the bore's as well
  // (train/size_fit.h).
  void add_size_head(int64_t bins_per_decade, double weight, bool bore = false,
                     bool pointer = false);
  // The block's weights: the box's and (with the bore side) the bore's.
  void set_size_weights(double weight, double bore_weight);
  // Whether encode_text needs the texts' quantities (a quantity branch is built).
  bool reads_quantities() const { return static_cast<bool>(quantity); }

  // exp(log_logit_scale), clamped at max_logit_scale (no gradient beyond it).
  torch::Tensor logit_scale() const;
  // Pulls log_logit_scale back to ln(max_logit_scale) when an optimizer step
  // pushed it beyond (CLIP's clamp); call after each step so that the
  // parameter does not sit where its gradient is zero.
  void clamp_logit_scale_();

  const TwoTowerOptions& options() const { return options_; }
  BRepEncoder brep() const { return brep_; }
  std::shared_ptr<torch::nn::Module> text() const { return text_.ptr(); }

  torch::nn::Linear brep_head{nullptr};  // d -> embed_dim, no bias
  // The text head: null in the locked space; in the residual space its last
  // layer starts at zero. quantity is null when quantity_width is 0.
  QuantityEncoder quantity{nullptr};
  // text_width (+ 2 * quantity_width) -> text_head_hidden; null when 0
  torch::nn::Linear text_hidden{nullptr};
  // (text_head_hidden, or text_width + 2 * quantity_width) -> embed_dim, no bias
  torch::nn::Linear text_head{nullptr};
  torch::Tensor log_logit_scale;  // [] initialised at ln(1 / init_temperature)
  SizeHead size_head{nullptr};    // null unless size_bins_per_decade > 0

 private:
  // Per column of the size block, the square root of its weight.
  at::Tensor block_scale(const at::Device& device) const;
  PooledTextImpl& split_text() const;  // the tower as a PooledText, or a clear error
  // pooled, checked to be [texts, text_width].
  torch::Tensor checked_pooled(const torch::Tensor& pooled, int64_t texts) const;

  BRepEncoder brep_;
  torch::nn::AnyModule text_;
  int64_t text_width_;
  TwoTowerOptions options_;
};
TORCH_MODULE(TwoTower);

}  // namespace cadclip::model
