// A text model loaded from a Hugging Face (or sentence-transformers) folder:
// tokenizer + encoder + pooling, and embedding texts in one call.
//   auto model = text::load_text_model("/opt/cadclip/models/all-MiniLM-L6-v2");
//   torch::Tensor e = model.embed(texts);  // [n, 384], L2-normalised
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cadclip/text/encoder.h"
#include "cadclip/text/tokenizer.h"

namespace cadclip::text {

struct TextModelOptions {
  std::string pooling = "auto";           // "auto" (1_Pooling/config.json, else cls), "cls", "mean"
  int64_t max_length = 0;                 // tokens per text with [CLS]/[SEP]; 0: the folder's
                                          // max_seq_length, else model_max_length, else 512
  bool activation_checkpointing = false;  // recompute layers in backward (training)
};
// Its JSON form (the "text" object of a checkpoint's config.json, less "folder").
void to_json(nlohmann::json& json, const TextModelOptions& options);
void from_json(const nlohmann::json& json, TextModelOptions& options);
// The help of the field at `field` (a member of `options`), its flag's.
std::string_view field_help(const TextModelOptions& options, const void* field);

struct TextModel {
  std::filesystem::path folder;  // where config.json and the weights are
  std::shared_ptr<const Tokenizer> tokenizer;
  std::shared_ptr<TextEncoder> encoder;  // in eval mode after loading
  Pooling pooling = Pooling::kCls;
  int64_t max_length = 512;

  // texts -> [n, hidden] pooled embeddings (L2-normalised when `normalize`),
  // float32 on the CPU, no gradients; runs on the encoder's device. Texts are sorted by length and
  // run in batches of `batch_size`, so padding stays small; the rows come back in input order.
  torch::Tensor embed(std::span<const std::string> texts, bool normalize = true,
                      int64_t batch_size = 32) const;
};

// Tensors of a padded batch: input_ids and attention_mask, [B, T] int64.
std::pair<torch::Tensor, torch::Tensor> to_tensors(const TokenBatch& batch);

// Builds the encoder that config.json describes (model_type "bert" or
// "deberta-v2") and copies the weights into it (see load_weights).
std::shared_ptr<TextEncoder> load_text_encoder(const std::filesystem::path& folder);

// Copies model.safetensors (or the shards of model.safetensors.index.json)
// into `encoder`: F16/BF16/F32/F64 become float32; names are taken with or
// without the "bert." / "deberta." prefix; heads and other unused tensors are
// listed at debug level. Throws cadclip::Error naming every missing tensor,
// every shape mismatch, or a non-finite weight.
void load_weights(TextEncoder& encoder, const std::filesystem::path& folder);

// The pretrained text model cadclip trains from when none is named:
// $CADCLIP_TEXT_MODEL, else /opt/cadclip/models/all-MiniLM-L6-v2 (scripts/setup.sh).
std::filesystem::path default_text_model_folder();

// Tokenizer, encoder, pooling and length limit of a model folder; a
// sentence-transformers folder (modules.json) gives its pooling and
// max_seq_length. Throws cadclip::Error naming the folder and what is wrong.
TextModel load_text_model(const std::filesystem::path& folder,
                          const TextModelOptions& options = {});

}  // namespace cadclip::text
