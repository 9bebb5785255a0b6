// The model config the tests build and checkpoint: the product's builder with
// a tiny B-Rep tower and the tiny BERT fixture (tests/fixtures/text/bert), so a
// model builds and runs in milliseconds.
#pragma once

#include <cstdint>

#include "cadclip/model/model_config.h"

namespace cadclip::testing {

inline model::ModelConfig tiny_model_config(int64_t max_text_length = 16) {
  model::ModelConfig config;
  config.brep.width = 16;
  config.brep.layers = 2;
  config.brep.heads = 2;
  config.brep.ffn_hidden = 24;
  config.brep.face_channels = 4;
  config.brep.edge_width = 4;
  config.two_tower.embed_dim = 8;
  config.two_tower.text_head_hidden = 0;  // a linear text head
  config.two_tower.quantity_width = 4;    // so that eval, index and search pass quantities too
  config.text_folder = "tests/fixtures/text/bert";
  config.text.max_length = max_text_length;
  return config;
}

}  // namespace cadclip::testing
