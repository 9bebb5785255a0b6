// The model config the tests build and checkpoint: the product's builder with
// a tiny B-Rep tower and the tiny BERT fixture (tests/fixtures/text/bert), so a
// model builds and runs in milliseconds.
#pragma once

#include <cstdint>

#include "cadclip/model/model_config.h"

namespace cadclip::testing {

// The tiny B-Rep tower; two layers, since with one the face-pair bias cannot
// reach the global token.
inline model::BRepEncoderOptions tiny_brep_options() {
  return {
      .width = 16, .layers = 2, .heads = 2, .ffn_hidden = 24, .face_channels = 4, .edge_width = 4};
}

inline model::ModelConfig tiny_model_config(int64_t max_text_length = 16) {
  model::ModelConfig config;
  config.brep = tiny_brep_options();
  config.two_tower.embed_dim = 8;
  config.two_tower.text_head_hidden = 0;  // a linear text head
  config.two_tower.quantity_width = 4;    // so that eval, index and search pass quantities too
  config.text_folder = "tests/fixtures/text/bert";
  config.text.max_length = max_text_length;
  return config;
}

}  // namespace cadclip::testing
