// The C++ B-Rep encoder against an independent PyTorch-Python implementation
// (tests/model/brep_encoder_reference.py) that loads the same weights.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <ATen/ATen.h>

#include "cadclip/core/safetensors.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/model/brep_encoder.h"
#include "random_graph.h"
#include "reference_dump.h"

namespace cadclip::model {
namespace {

TEST(BRepEncoderParity, MatchesThePyTorchReference) {
  BRepEncoderOptions o;
  o.width = 48;
  o.layers = 2;
  o.heads = 4;
  o.ffn_hidden = 64;
  o.face_channels = 8;
  o.edge_width = 8;
  o.max_hops = 3;
  o.attention_bias_init = 0.5;
  torch::manual_seed(5);
  BRepEncoder encoder(o);
  encoder->eval();
  const data::BRepBatch batch = data::collate(std::vector{
      testing::random_graph(9, 81), testing::random_graph(1, 82), testing::random_graph(14, 83)});
  at::Tensor output;
  {
    torch::NoGradGuard no_grad;
    output = encoder->forward(batch);
  }

  SafetensorsWriter file;
  for (const auto& p : encoder->named_parameters()) {
    data::add_tensor(file, "param." + p.key(), p.value().detach());
  }
  for (const auto& [name, tensor] : batch.named_tensors()) {
    data::add_tensor(file, "batch." + name, tensor);
  }
  data::add_tensor(file, "output", output);
  cadclip::testing::add_brep_options(file, o);

  const auto path = std::filesystem::temp_directory_path() /
                    ("cadclip_brep_parity_" + std::to_string(::getpid()) + ".safetensors");
  file.write(path);
  const std::string command = std::string(CADCLIP_PYTHON_EXE) + " " + CADCLIP_SOURCE_DIR +
                              "/tests/model/brep_encoder_reference.py --check " + path.string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cadclip::model
