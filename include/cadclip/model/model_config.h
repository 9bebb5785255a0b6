// What a two-tower model is made of, as JSON in every checkpoint's
// config.json: the B-Rep encoder's and heads' options and the text model
// (architecture from its folder's config.json, tokenizer, pooling, length).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cadclip/model/brep_encoder.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/text_model.h"

namespace cadclip::model {

struct ModelConfig {
  BRepEncoderOptions brep;      // the B-Rep tower
  TwoTowerOptions two_tower;    // heads, temperature, text precision
  std::string text_folder;      // Hugging Face folder of the text tower (config, tokenizer)
  text::TextModelOptions text;  // pooling, max length, activation checkpointing
};

// The JSON forms, one per struct: {"brep": {...}, "two_tower": {...}, "text":
// {"folder", "pooling", "max_length", "activation_checkpointing"}}. Reading
// keeps the default of an absent key; a value of the wrong type throws
// cadclip::JsonFieldError naming its key path.
void to_json(nlohmann::json& json, const BRepEncoderOptions& options);
void from_json(const nlohmann::json& json, BRepEncoderOptions& options);
void to_json(nlohmann::json& json, const TwoTowerOptions& options);
void from_json(const nlohmann::json& json, TwoTowerOptions& options);
void to_json(nlohmann::json& json, const ModelConfig& config);
void from_json(const nlohmann::json& json, ModelConfig& config);
// The help of the field at `field` (a member of `options`), its flag's.
std::string_view field_help(const BRepEncoderOptions& options, const void* field);
std::string_view field_help(const TwoTowerOptions& options, const void* field);
std::string_view field_help(const ModelConfig& config, const void* field);

// "fp32", "bf16" or "fp16" -> the ScalarType; throws cadclip::Error otherwise.
c10::ScalarType parse_text_precision(const std::string& name);
// The ScalarType -> "fp32", "bf16" or "fp16" (what parse_text_precision reads).
std::string text_precision_name(c10::ScalarType type);

// The model config of a checkpoint's config.json; throws cadclip::Error
// naming the file and key when it is not valid JSON or a value has the wrong
// type. Checkpoints saved before two_tower.text_head_hidden and
// quantity_width existed lack them: their models had neither (0).
ModelConfig read_model_config(const std::filesystem::path& config_json);

// A built model with its text side.
struct BuiltModel {
  TwoTower model{nullptr};
  text::TextModel text;  // tokenizer, pooling, max_length; text.encoder is model's "text" tower
  ModelConfig config;
};

// Builds the model; the text tower's weights come from `text_folder`
// (pretrained), the rest is initialised from the current torch seed.
BuiltModel build_model(const ModelConfig& config);

}  // namespace cadclip::model
