#include "cadclip/model/two_tower.h"

#include <cmath>

#include <ATen/ATen.h>
#include <torch/nn/functional/normalization.h>

#include "cadclip/core/error.h"
#include "cadclip/model/autocast.h"
#include "cadclip/model/pooled_text.h"

namespace cadclip::model {

namespace F = torch::nn::functional;

namespace {

torch::Tensor normalise(const torch::Tensor& x) {
  return F::normalize(x, F::NormalizeFuncOptions().p(2).dim(-1).eps(1e-12));
}

// Autocast in the text tower's precision on `device`; off for fp32.
AutocastGuard text_autocast(c10::DeviceType device, c10::ScalarType precision) {
  return AutocastGuard(device, precision != c10::kFloat, precision);
}

}  // namespace

TextSpace parse_text_space(const std::string& name) {
  if (name == "head") return TextSpace::kHead;
  if (name == "locked") return TextSpace::kLocked;
  if (name == "residual") return TextSpace::kResidual;
  throw Error(format("text space '{}' is not head, locked or residual", name));
}

std::string text_space_name(TextSpace space) {
  switch (space) {
    case TextSpace::kLocked:
      return "locked";
    case TextSpace::kResidual:
      return "residual";
    default:
      return "head";
  }
}

void TwoTowerOptions::validate() const {
  if (embed_dim <= 0) {
    throw Error(
        format("TwoTowerOptions.embed_dim = {} is invalid: it must be positive", embed_dim));
  }
  if (text_head_hidden < 0) {
    throw Error(format(
        "TwoTowerOptions.text_head_hidden = {} is invalid: it must be 0 (linear) or positive",
        text_head_hidden));
  }
  if (quantity_width < 0) {
    throw Error(format(
        "TwoTowerOptions.quantity_width = {} is invalid: it must be 0 (no quantity branch) or "
        "positive",
        quantity_width));
  }
  if (size_bins_per_decade < 0) {
    throw Error(format(
        "TwoTowerOptions.size_bins_per_decade = {} is invalid: it must be 0 (no size block) or "
        "positive (25 is usual)",
        size_bins_per_decade));
  }
  if (size_bins_per_decade > 0 && !(size_weight > 0 && std::isfinite(size_weight))) {
    throw Error(format(
        "TwoTowerOptions.size_weight = {} is invalid: the size block's weight must be positive",
        size_weight));
  }
  if (size_bore && !(size_bore_weight > 0 && std::isfinite(size_bore_weight))) {
    throw Error(format(
        "TwoTowerOptions.size_bore_weight = {} is invalid: the bore side's weight must be positive",
        size_bore_weight));
  }
  if (size_bore && size_bins_per_decade == 0) {
    throw Error(
        "TwoTowerOptions.size_bore is true without a size block: set size_bins_per_decade too "
        "(cadclip fit-sizes --bore does both)");
  }
  if (size_pointer && size_bins_per_decade == 0) {
    throw Error(
        "TwoTowerOptions.size_pointer is true without a size block: set size_bins_per_decade "
        "too (cadclip fit-sizes does both)");
  }
  if (!(init_temperature > 0)) {
    throw Error(
        format("TwoTowerOptions.init_temperature = {} is invalid: it must be positive "
               "(CLIP uses 0.07)",
               init_temperature));
  }
  if (!(max_logit_scale >= 1.0 / init_temperature)) {
    throw Error(
        format("TwoTowerOptions.max_logit_scale = {} is below the initial logit scale 1 / "
               "init_temperature = {}; raise it (CLIP uses 100)",
               max_logit_scale, 1.0 / init_temperature));
  }
  if (text_precision != c10::kFloat && text_precision != c10::kBFloat16 &&
      text_precision != c10::kHalf) {
    throw Error(
        format("TwoTowerOptions.text_precision = {} is invalid: use Float, BFloat16 or "
               "Half",
               c10::toString(text_precision)));
  }
}

TwoTowerImpl::TwoTowerImpl(BRepEncoder brep, torch::nn::AnyModule text, int64_t text_width,
                           const TwoTowerOptions& options)
    : brep_(std::move(brep)), text_(std::move(text)), text_width_(text_width), options_(options) {
  options_.validate();
  if (text_.is_empty()) throw Error("TwoTower: the text encoder is empty; pass a text module");
  if (text_width_ <= 0) {
    throw Error(
        format("TwoTower: text_width = {} is invalid; pass the width of the text "
               "encoder's pooled output (384 for MiniLM-L6)",
               text_width_));
  }
  if (options_.text_space != TextSpace::kHead && options_.embed_dim != text_width_) {
    throw Error(
        format("TwoTower: the {} text space is the text tower's own embedding space, of width "
               "{}; embed_dim is {}. Pass --embed-dim {}",
               text_space_name(options_.text_space), text_width_, options_.embed_dim, text_width_));
  }
  register_module("brep", brep_.ptr());
  register_module("text", text_.ptr());
  brep_head = register_module(
      "brep_head",
      torch::nn::Linear(
          torch::nn::LinearOptions(brep_->options().width, options_.embed_dim).bias(false)));
  log_logit_scale = register_parameter(
      "log_logit_scale", at::full({}, std::log(1.0 / options_.init_temperature), at::kFloat));
  if (options_.size_bins_per_decade > 0) {
    size_head =
        register_module("size_head", SizeHead(options_.embed_dim, options_.size_bins_per_decade,
                                              options_.size_bore, options_.size_pointer));
  }
  if (options_.text_space == TextSpace::kLocked) return;  // nothing trained on the text side
  int64_t head_input = text_width_;
  if (options_.quantity_width > 0) {
    quantity = register_module("quantity", QuantityEncoder(options_.quantity_width));
    head_input += quantity->output_width();
  }
  if (options_.text_head_hidden > 0) {
    text_hidden =
        register_module("text_hidden", torch::nn::Linear(head_input, options_.text_head_hidden));
    head_input = options_.text_head_hidden;
  }
  text_head = register_module(
      "text_head",
      torch::nn::Linear(torch::nn::LinearOptions(head_input, options_.embed_dim).bias(false)));
  if (options_.text_space == TextSpace::kResidual) {
    torch::NoGradGuard no_grad;
    text_head->weight.zero_();  // the correction starts at nothing: the locked space
  }
}

torch::Tensor TwoTowerImpl::encode_brep(const data::BRepBatch& batch) {
  NoAutocast fp32;
  return normalise(brep_head(brep_->forward(batch)));
}

torch::Tensor TwoTowerImpl::encode_brep(std::span<const data::BRepGraph* const> graphs) {
  NoAutocast fp32;
  return normalise(brep_head(brep_->forward_graphs(graphs, brep_head->weight.device())));
}

torch::Tensor TwoTowerImpl::encode_brep(const data::GroupedBatch& batch) {
  NoAutocast fp32;
  return normalise(brep_head(brep_->forward_grouped(batch, brep_head->weight.device())));
}

torch::Tensor TwoTowerImpl::encode_brep(const std::vector<data::BRepGraph>& graphs) {
  std::vector<const data::BRepGraph*> pointers;
  pointers.reserve(graphs.size());
  for (const data::BRepGraph& g : graphs) pointers.push_back(&g);
  return encode_brep(std::span<const data::BRepGraph* const>(pointers));
}

void TwoTowerImpl::add_size_head(int64_t bins_per_decade, double weight, bool bore, bool pointer) {
  TwoTowerOptions changed = options_;
  changed.size_bins_per_decade = bins_per_decade;
  changed.size_weight = weight;
  changed.size_bore = bore;
  changed.size_bore_weight = weight;
  changed.size_pointer = pointer;
  changed.validate();
  SizeHead head(changed.embed_dim, bins_per_decade, bore, pointer);
  head->to(brep_head->weight.device());
  size_head = size_head ? replace_module("size_head", head) : register_module("size_head", head);
  options_ = changed;
}

void TwoTowerImpl::set_size_weights(double weight, double bore_weight) {
  TwoTowerOptions changed = options_;
  changed.size_weight = weight;
  changed.size_bore_weight = bore_weight;
  changed.validate();
  options_ = changed;
}

at::Tensor TwoTowerImpl::block_scale(const at::Device& device) const {
  const int64_t box = size_head->box_width();
  at::Tensor scale = at::full({size_head->block_width()}, std::sqrt(options_.size_weight),
                              at::TensorOptions(at::kFloat).device(device));
  if (size_head->bore())
    scale.narrow(0, box, scale.size(0) - box).fill_(std::sqrt(options_.size_bore_weight));
  return scale;
}

int64_t TwoTowerImpl::search_dim() const {
  return options_.embed_dim + (size_head ? size_head->block_width() : 0);
}

torch::Tensor TwoTowerImpl::embed_parts(std::span<const data::BRepGraph* const> graphs) {
  const torch::Tensor embedded = encode_brep(graphs);
  if (!size_head) return embedded;
  NoAutocast fp32;
  const at::Tensor block =
      part_size_block(graphs, size_head->bins(), size_head->bore()).to(embedded.device());
  return at::cat({embedded, block_scale(embedded.device()) * block}, 1);
}

torch::Tensor TwoTowerImpl::embed_parts(const std::vector<data::BRepGraph>& graphs) {
  std::vector<const data::BRepGraph*> pointers;
  pointers.reserve(graphs.size());
  for (const data::BRepGraph& g : graphs) pointers.push_back(&g);
  return embed_parts(std::span<const data::BRepGraph* const>(pointers));
}

torch::Tensor TwoTowerImpl::with_text_sizes(const torch::Tensor& embedded,
                                            std::span<const std::string> texts) {
  if (!size_head) return embedded;
  CADCLIP_CHECK(embedded.dim() == 2 && embedded.size(0) == static_cast<int64_t>(texts.size()) &&
                    embedded.size(1) == options_.embed_dim,
                "with_text_sizes: one embedding of embed_dim per text");
  NoAutocast fp32;
  const at::Tensor numbers = size_number_features(texts, size_head->bore()).to(embedded.device());
  const at::Tensor stated = numbers.select(1, 0).unsqueeze(1);  // the first number's presence
  const at::Tensor block = size_head->probabilities(at::cat({embedded.to(at::kFloat), numbers}, 1));
  return at::cat({embedded, block_scale(embedded.device()) * block * stated}, 1);
}

torch::Tensor TwoTowerImpl::as_part_query(const torch::Tensor& parts) const {
  if (!size_head) return parts;
  CADCLIP_CHECK(parts.size(-1) == search_dim(), "as_part_query: rows of search_dim");
  at::Tensor out = parts.clone();
  out.narrow(-1, options_.embed_dim, size_head->block_width()).zero_();
  return out;
}

torch::Tensor TwoTowerImpl::pool_text(const torch::Tensor& input_ids,
                                      const torch::Tensor& attention_mask) {
  torch::Tensor pooled;
  {
    const AutocastGuard precision =
        text_autocast(input_ids.device().type(), options_.text_precision);
    pooled = text_.forward(input_ids, attention_mask);
  }
  return checked_pooled(pooled, input_ids.size(0));
}

torch::Tensor TwoTowerImpl::text_hidden_before(const torch::Tensor& input_ids,
                                               const torch::Tensor& attention_mask, int64_t first) {
  const AutocastGuard precision = text_autocast(input_ids.device().type(), options_.text_precision);
  return split_text().hidden_before(input_ids, attention_mask, first).to(at::kFloat);
}

torch::Tensor TwoTowerImpl::pool_text_from(const torch::Tensor& hidden,
                                           const torch::Tensor& attention_mask, int64_t first) {
  torch::Tensor pooled;
  {
    const AutocastGuard precision = text_autocast(hidden.device().type(), options_.text_precision);
    pooled = split_text().forward_from(hidden, attention_mask, first);
  }
  return checked_pooled(pooled, hidden.size(0));
}

PooledTextImpl& TwoTowerImpl::split_text() const {
  auto* pooled = dynamic_cast<PooledTextImpl*>(text_.ptr().get());
  if (pooled == nullptr)
    throw Error(
        "TwoTower: this text tower cannot be split between layers (a PooledText tower over a "
        "BERT or DeBERTa encoder can); train all its layers or none");
  return *pooled;
}

torch::Tensor TwoTowerImpl::checked_pooled(const torch::Tensor& pooled, int64_t texts) const {
  if (pooled.dim() != 2 || pooled.size(0) != texts || pooled.size(1) != text_width_) {
    throw Error(
        format("TwoTower: the text encoder returned shape {} for {} texts; expected pooled "
               "embeddings [{}, {}] (text_width)",
               pooled.sizes(), texts, texts, text_width_));
  }
  return pooled;
}

torch::Tensor TwoTowerImpl::project_text(const torch::Tensor& pooled,
                                         const text::QuantityBatch& quantities) {
  NoAutocast fp32;
  torch::Tensor x = pooled.to(at::kFloat);
  if (options_.text_space == TextSpace::kLocked) return normalise(x);
  if (quantity) {
    if (!quantities.defined()) {
      throw Error(
          format("TwoTower: this model reads the numbers in each text (two_tower.quantity_width = "
                 "{}), and no quantities were passed; pass text::quantity_batch(texts)",
                 options_.quantity_width));
    }
    if (quantities.size() != x.size(0)) {
      throw Error(format("TwoTower: quantities for {} texts, pooled features for {}",
                         quantities.size(), x.size(0)));
    }
    x = at::cat({x, quantity(quantities)}, -1);
  }
  if (text_hidden) x = at::gelu(text_hidden(x));
  if (options_.text_space == TextSpace::kResidual)
    return normalise(normalise(pooled.to(at::kFloat)) + text_head(x));
  return normalise(text_head(x));
}

torch::Tensor TwoTowerImpl::encode_text(const torch::Tensor& input_ids,
                                        const torch::Tensor& attention_mask,
                                        const text::QuantityBatch& quantities) {
  return project_text(pool_text(input_ids, attention_mask), quantities);
}

TwoTowerOutput TwoTowerImpl::forward(const data::BRepBatch& batch, const torch::Tensor& input_ids,
                                     const torch::Tensor& attention_mask,
                                     const text::QuantityBatch& quantities) {
  TwoTowerOutput out;
  out.brep = encode_brep(batch);
  out.text = encode_text(input_ids, attention_mask, quantities);
  out.logit_scale = logit_scale();
  return out;
}

torch::Tensor TwoTowerImpl::logit_scale() const {
  return log_logit_scale.clamp_max(std::log(options_.max_logit_scale)).exp();
}

void TwoTowerImpl::clamp_logit_scale_() {
  torch::NoGradGuard no_grad;
  log_logit_scale.clamp_max_(std::log(options_.max_logit_scale));
}

}  // namespace cadclip::model
