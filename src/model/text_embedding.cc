#include "cadclip/model/text_embedding.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <vector>

#include "cadclip/text/quantities.h"

namespace cadclip::model {

at::Tensor embed_texts(BuiltModel& built, std::span<const std::string> texts,
                       const text::LengthGrouping& grouping) {
  if (texts.empty()) return at::empty({0, built.model->options().embed_dim}, at::kFloat);
  c10::InferenceMode inference;
  return text::forward_in_length_groups(
      text::tokenize_rows(*built.text.tokenizer, texts, built.text.max_length),
      built.text.tokenizer->pad_id(), grouping, at::kCPU,
      [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t> rows) {
        text::QuantityBatch quantities;
        if (built.model->reads_quantities()) {
          std::vector<std::string> group;
          group.reserve(rows.size());
          for (const int64_t i : rows) group.push_back(texts[static_cast<size_t>(i)]);
          quantities = text::quantity_batch(group);
        }
        return built.model->encode_text(ids, mask, quantities);
      });
}

}  // namespace cadclip::model
