// Fixtures of the index and serve tests: a tiny untrained checkpoint (the
// small BERT of tests/fixtures/text/bert), a tiny prepared folder of random graphs
// with captions, and a library folder of real CAD files from ../shared/data/cad.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../model/random_graph.h"
#include "../model/tiny_model.h"
#include "cadclip/core/file.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/index/stored_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"

namespace cadclip::index::testing {

namespace fs = std::filesystem;

// A fresh folder under /tmp, removed by the caller.
inline fs::path fresh_folder(const std::string& name) {
  const fs::path root = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

// Writes <run>/checkpoints/last.json of a tiny model initialised from `seed`.
inline void write_checkpoint(const fs::path& run, int seed) {
  torch::manual_seed(seed);
  const model::ModelConfig config = cadclip::testing::tiny_model_config();
  model::save_checkpoint(run, "last", model::build_model(config), model::TrainingState{});
}

// A library of `items` for a tiny checkpoint written to `run`, each part
// with a seeded random unit embedding of `dim` (the tiny model's size):
// ready for write_stored_index.
inline StoredIndex random_library(const fs::path& run, std::vector<Item> items, int seed, int dim) {
  write_checkpoint(run, 0);
  StoredIndex library;
  library.checkpoint = run.string();
  library.checkpoint_identity = model::checkpoint_identity(run);
  library.embed_dim = dim;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (Item& item : items) {
    StoredPart part;
    part.item = std::move(item);
    float norm = 0;
    for (int d = 0; d < dim; ++d) {
      part.embedding.push_back(normal(rng));
      norm += part.embedding.back() * part.embedding.back();
    }
    for (float& v : part.embedding) v /= std::sqrt(norm);
    library.parts.push_back(std::move(part));
  }
  return library;
}

inline const std::vector<std::string>& caption_texts() {
  static const std::vector<std::string> kTexts = {
      "Cube 10 x 10 x 10.",          "Cylinder 30 by 40",     "M6 hex nut",   "Spur gear, 24 teeth",
      "Washer, inner 6.4, outer 12", "L-bracket, 3 mm sheet", "Pipe, 2 inch", "Hexagonal prism"};
  return kTexts;
}

// A prepared folder of `n` random graphs m0..m<n-1> with one caption each.
inline void write_prepared(const fs::path& folder, int n, int seed = 200) {
  fs::create_directories(folder);
  data::ShardWriter writer;
  std::vector<data::Caption> captions;
  for (int i = 0; i < n; ++i) {
    data::BRepGraph g = cadclip::testing::random_graph(2 + i % 5, seed + i);
    g.id = "m" + std::to_string(i);
    g.geometry_hash = "h" + std::to_string(seed + i);
    writer.add(g);
    captions.push_back({g.id, "abstract", caption_texts()[i % caption_texts().size()]});
  }
  writer.write(folder / "shard-00000.safetensors");
  write_text_atomic(folder / "manifest.json",
                    R"({"shards": [{"file": "shard-00000.safetensors"}]})");
  data::write_captions_jsonl(folder / "captions.jsonl", captions);
}

// Small real parts (a few faces each) copied into `folder`.
inline std::vector<fs::path> real_parts() {
  return {CADCLIP_SHARED_DATA "/cad/brepnet/76879_65a30a82_0010_2.step",
          CADCLIP_SHARED_DATA "/cad/brepnet/21165_5cb2d287_0000_2.step",
          CADCLIP_SHARED_DATA "/cad/brepnet/54516_ac9e2ef4_0008_1.step",
          CADCLIP_SHARED_DATA "/cad/brepnet/82144_98698423_0001_2.step"};
}

}  // namespace cadclip::index::testing
