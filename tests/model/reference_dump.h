// What dumps for tests/model/brep_encoder_reference.py carry besides tensors:
// the B-Rep encoder's options as safetensors metadata, under the names the
// reference reads (the parity test and the B-Rep and training-step benches).
#pragma once

#include <string>

#include "cadclip/core/safetensors.h"
#include "cadclip/model/brep_encoder.h"

namespace cadclip::testing {

inline void add_brep_options(SafetensorsWriter& file, const model::BRepEncoderOptions& o) {
  file.set_metadata("width", std::to_string(o.width));
  file.set_metadata("layers", std::to_string(o.layers));
  file.set_metadata("heads", std::to_string(o.heads));
  file.set_metadata("ffn_hidden", std::to_string(o.ffn_hidden));
  file.set_metadata("face_channels", std::to_string(o.face_channels));
  file.set_metadata("edge_width", std::to_string(o.edge_width));
  file.set_metadata("max_hops", std::to_string(o.max_hops));
  file.set_metadata("dropout", std::to_string(o.dropout));
}

}  // namespace cadclip::testing
