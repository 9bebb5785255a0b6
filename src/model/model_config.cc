#include "cadclip/model/model_config.h"

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/model/pooled_text.h"

namespace cadclip::model {
std::string text_precision_name(c10::ScalarType type) {
  switch (type) {
    case c10::kBFloat16:
      return "bf16";
    case c10::kHalf:
      return "fp16";
    default:
      return "fp32";
  }
}

c10::ScalarType parse_text_precision(const std::string& name) {
  if (name == "fp32") return c10::kFloat;
  if (name == "bf16") return c10::kBFloat16;
  if (name == "fp16") return c10::kHalf;
  throw Error(format("text precision '{}' is not fp32, bf16 or fp16", name));
}

}  // namespace cadclip::model

// The text precision as JSON: its name.
template <>
struct nlohmann::adl_serializer<c10::ScalarType> {
  static void to_json(nlohmann::json& json, c10::ScalarType type) {
    json = cadclip::model::text_precision_name(type);
  }
  static void from_json(const nlohmann::json& json, c10::ScalarType& type) {
    type = cadclip::model::parse_text_precision(json.get<std::string>());
  }
};

// The text space as JSON: its name.
template <>
struct nlohmann::adl_serializer<cadclip::model::TextSpace> {
  static void to_json(nlohmann::json& json, cadclip::model::TextSpace space) {
    json = cadclip::model::text_space_name(space);
  }
  static void from_json(const nlohmann::json& json, cadclip::model::TextSpace& space) {
    space = cadclip::model::parse_text_space(json.get<std::string>());
  }
};

namespace cadclip::model {

CADCLIP_OPTION_FIELDS(BRepEncoderOptions, (width, "B-Rep encoder width"),
                      (layers, "B-Rep encoder layers"), (heads, "B-Rep encoder heads"),
                      (ffn_hidden, "B-Rep SwiGLU hidden width"),
                      (face_channels, "Channels of the face CNN's middle layer (2x at its last)"),
                      (edge_width, "Width of the edge features before the per-head bias"),
                      (max_hops, "Hop counts at or above this share one embedding"),
                      (dropout, "B-Rep dropout"),
                      (attention_bias_init, "Std of the bias embeddings' initial values"))
CADCLIP_OPTION_FIELDS(
    TwoTowerOptions, (embed_dim, "Shared embedding size"),
    (init_temperature, "The logit scale starts at 1 / this"),
    (max_logit_scale, "The logit scale never exceeds this"),
    (text_head_hidden,
     "Width of a hidden GELU layer in the text head (0 = linear head); helps a frozen text "
     "tower"),
    (quantity_width,
     "Width of the quantity branch that reads the numbers in captions (sizes, counts, angles) "
     "beside the text tower; 0 = none"),
    (text_precision, "Text tower precision"),
    (text_space,
     "How texts land in the shared space: head (a trained head over the pooled features), "
     "locked (the pretrained sentence embedding itself; needs --embed-dim of the tower's width, "
     "384 for MiniLM), residual (the pretrained embedding plus a trained correction that starts "
     "at zero; same width)"),
    (size_bins_per_decade,
     "Bins per decade of the size block that search appends (cadclip fit-sizes); 0 = none"),
    (size_weight, "Weight of the size block beside the cosine"),
    (size_bore,
     "Whether the size block places the part's central bore as well as its box (cadclip "
     "fit-sizes --bore)"),
    (size_bore_weight, "Weight of the size block's bore side beside the cosine"),
    (size_pointer,
     "Whether the size head's means point at the numbers a caption states (cadclip fit-sizes "
     "does so unless --no-pointer)"))
CADCLIP_FIELD_HELP(ModelConfig, (brep, "The B-Rep tower"),
                   (two_tower, "Heads, temperature, text precision"),
                   (text_folder,
                    "Hugging Face folder of the pretrained text tower ($CADCLIP_TEXT_MODEL)"),
                   (text, "Pooling, max length, activation checkpointing"))

void to_json(nlohmann::json& json, const ModelConfig& config) {
  json = {{"brep", config.brep}, {"two_tower", config.two_tower}, {"text", config.text}};
  json["text"]["folder"] = config.text_folder;
}

void from_json(const nlohmann::json& json, ModelConfig& config) {
  if (!json.is_object()) throw JsonFieldError("(config)", "not a JSON object");
  read_json_field(json, "brep", config.brep);
  read_json_field(json, "two_tower", config.two_tower);
  read_json_field(json, "text", config.text);
  if (const auto it = json.find("text"); it != json.end() && it->is_object())
    read_json_field(*it, "folder", config.text_folder);
}

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_text_file(config_json));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{} is not valid JSON: {}", config_json.string(), e.what()));
  }
  ModelConfig config;
  if (const auto it = json.find("two_tower"); it != json.end() && it->is_object()) {
    // Saved before these keys existed: a linear text head, no quantity branch.
    if (!it->contains("text_head_hidden")) config.two_tower.text_head_hidden = 0;
    if (!it->contains("quantity_width")) config.two_tower.quantity_width = 0;
  }
  try {
    from_json(json, config);
    return config;
  } catch (const Error& e) {
    throw Error(format("{}: {}; fix the file or save the checkpoint again", config_json.string(),
                       e.what()));
  }
}

BuiltModel build_model(const ModelConfig& config) {
  config.brep.validate();
  config.two_tower.validate();
  if (config.text_folder.empty())
    throw Error("the model config names no text model folder (text.folder)");
  BuiltModel built;
  built.config = config;
  built.text = text::load_text_model(config.text_folder, config.text);
  built.text.encoder->set_activation_checkpointing(config.text.activation_checkpointing);
  PooledText pooled(built.text.encoder, built.text.pooling);
  built.model = TwoTower(BRepEncoder(config.brep), torch::nn::AnyModule(pooled),
                         built.text.encoder->hidden_size(), config.two_tower);
  return built;
}

}  // namespace cadclip::model
