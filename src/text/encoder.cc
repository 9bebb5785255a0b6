// What every text encoder shares (include/cadclip/text/encoder.h): pooling,
// and the tower split between layers over the encoders' embed and run_layers.
#include <ATen/ATen.h>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/text/encoder.h"

namespace cadclip::text {

std::string_view pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kCls:
      return "cls";
    case Pooling::kMean:
      return "mean";
  }
  CADCLIP_CHECK(false, "unknown pooling {}", static_cast<int>(pooling));
}

std::optional<Pooling> parse_pooling(std::string_view name) {
  if (name == "cls") return Pooling::kCls;
  if (name == "mean") return Pooling::kMean;
  return std::nullopt;
}

torch::Tensor pool(const torch::Tensor& hidden, const torch::Tensor& attention_mask,
                   Pooling pooling) {
  TORCH_CHECK(hidden.dim() == 3 && attention_mask.dim() == 2 &&
                  hidden.size(0) == attention_mask.size(0) &&
                  hidden.size(1) == attention_mask.size(1),
              "pool: hidden must be [B, T, H] and attention_mask [B, T]");
  if (pooling == Pooling::kCls) return hidden.select(1, 0);
  const torch::Tensor mask = attention_mask.to(hidden.dtype()).unsqueeze(-1);  // [B, T, 1]
  return (hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9);
}

torch::Tensor TextEncoder::forward(const torch::Tensor& input_ids,
                                   const torch::Tensor& attention_mask) {
  return run_layers(embed(input_ids, attention_mask), attention_mask, 0, layer_count());
}

torch::Tensor TextEncoder::hidden_before(const torch::Tensor& input_ids,
                                         const torch::Tensor& attention_mask, int64_t first) {
  check_split(first);
  return run_layers(embed(input_ids, attention_mask), attention_mask, 0, first);
}

torch::Tensor TextEncoder::forward_from(const torch::Tensor& hidden,
                                        const torch::Tensor& attention_mask, int64_t first) {
  check_split(first);
  TORCH_CHECK(hidden.dim() == 3 && attention_mask.dim() == 2 &&
                  hidden.size(0) == attention_mask.size(0) &&
                  hidden.size(1) == attention_mask.size(1),
              "TextEncoder: hidden must be [B, T, H] with attention_mask [B, T]");
  return run_layers(hidden, attention_mask, first, layer_count());
}

void TextEncoder::check_split(int64_t first) const {
  if (first < 0 || first > layer_count())
    throw Error(format("the {} text tower has {} layers: it cannot be split before layer {}",
                       architecture(), layer_count(), first));
}

}  // namespace cadclip::text
