// What a two-tower model is made of, as JSON in every checkpoint's
// config.json: the B-Rep encoder's and heads' options and the text model
// (architecture from its folder's config.json, tokenizer, pooling, length).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

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

// "fp32", "bf16" or "fp16" -> the ScalarType; throws cadclip::Error otherwise.
c10::ScalarType parse_text_precision(const std::string& name);
// The ScalarType -> "fp32", "bf16" or "fp16" (what parse_text_precision reads).
std::string text_precision_name(c10::ScalarType type);

nlohmann::json to_json(const ModelConfig& config);
// Throws cadclip::Error naming the key when a value has the wrong type.
ModelConfig model_config_from_json(const nlohmann::json& json);

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
