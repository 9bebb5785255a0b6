// Test-only: tiny prepared folders of random graphs (as `cadclip prepare`
// writes them: shard, manifest, captions sorted by id, splits), the options
// of tiny runs on them, and the tensors of a run's checkpoint, for the tests
// that train on them.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../model/random_graph.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/train/trainer.h"

namespace cadclip::testing {

// Model `i` of the tiny datasets: id m00, m01, ... (so that id order is
// number order), 3 to 6 faces, one caption, in the train split.
inline std::string tiny_id(int i) { return (i < 10 ? "m0" : "m") + std::to_string(i); }

// What `cadclip prepare` writes of graphs in `writer` (all of them in one
// shard), their captions and splits, into `folder`.
inline void write_prepared_folder(const std::filesystem::path& folder, data::ShardWriter& writer,
                                  const std::vector<data::Caption>& captions,
                                  const data::Splits& splits) {
  std::filesystem::create_directories(folder / "shards");
  const auto count = writer.size();
  nlohmann::json shards = nlohmann::json::array();
  if (count > 0) {
    shards.push_back({{"file", "shards/shard-00000.safetensors"}, {"models", count}});
    writer.write(folder / "shards" / "shard-00000.safetensors");
  }
  write_text_atomic(
      folder / "manifest.json",
      nlohmann::json{{"format", "cadclip.prepared"},
                     {"manifest_version", 1},
                     {"shard_schema_version", data::kShardSchemaVersion},
                     {"counts", {{"inputs", count}, {"prepared", count}, {"failed", 0}}},
                     {"shards", shards}}
          .dump(1));
  data::write_captions_jsonl(folder / "captions.jsonl", captions);
  data::write_splits(folder / "splits.json", splits);
}

// A prepared folder holding the models `models` (numbers, in id order).
inline void write_tiny_prepared(const std::filesystem::path& folder,
                                const std::vector<int>& models) {
  data::ShardWriter writer;
  std::vector<data::Caption> captions;
  data::Splits splits;
  const char* shapes[] = {"plate", "flange", "washer", "gear", "shaft", "bracket", "nut", "pipe"};
  for (const int i : models) {
    data::BRepGraph g = random_graph(3 + i % 4, 500 + static_cast<uint32_t>(i));
    g.id = tiny_id(i);
    g.geometry_hash = std::string(12, 'a') + std::to_string(1000 + i);
    writer.add(g);
    captions.push_back({g.id, "abstract", format("a {} number {}", shapes[i % 8], i)});
    splits.train.push_back(g.id);
  }
  write_prepared_folder(folder, writer, captions, splits);
}

// The options of the trainer tests' runs: the tiny BERT of
// tests/fixtures/text/bert, a small B-Rep tower, batches of 4, 2 epochs, no
// validation; `out` is emptied first. Tests change what they are about.
inline train::TrainOptions tiny_train_options(const std::vector<std::filesystem::path>& data,
                                              const std::filesystem::path& out) {
  train::TrainOptions o;
  for (const std::filesystem::path& folder : data) o.data.push_back(folder.string());
  o.out = out.string();
  std::filesystem::remove_all(o.out);
  o.model.text_folder = "tests/fixtures/text/bert";
  o.model.text.max_length = 16;
  o.batch_size = 4;
  o.epochs = 2;
  o.lr = 3e-3;
  o.text_lr = 1e-3;
  o.warmup = 0;
  o.threads = 1;
  o.seed = 7;
  o.validation_split = std::nullopt;
  o.model.two_tower.embed_dim = 16;
  o.model.brep.width = 32;
  o.model.brep.layers = 2;
  o.model.brep.heads = 2;
  o.model.brep.ffn_hidden = 48;
  o.model.brep.face_channels = 8;
  o.model.brep.edge_width = 8;
  return o;
}

// The same on one folder, the run in <folder>_<run>.
inline train::TrainOptions tiny_run_options(const std::filesystem::path& data,
                                            const std::string& run) {
  return tiny_train_options(std::vector<std::filesystem::path>{data},
                            data.parent_path() / (data.filename().string() + "_" + run));
}

using TensorBytes = std::map<std::string, std::vector<std::byte>>;

// `actual` holds the same tensors as `expected`, bit for bit.
inline void expect_same_tensors(const TensorBytes& expected, const TensorBytes& actual,
                                const std::string& what = "") {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (const auto& [name, bytes] : expected) {
    ASSERT_TRUE(actual.contains(name)) << what << name << " is missing";
    EXPECT_TRUE(actual.at(name) == bytes) << what << name << " differs";
  }
}

// Every tensor of a safetensors file, by name (prefixed).
inline void add_tensor_bytes(const std::filesystem::path& file, const std::string& prefix,
                             TensorBytes& out) {
  const SafetensorsReader reader = SafetensorsReader::open(file);
  for (const TensorInfo& t : reader.tensors()) {
    const auto bytes = reader.bytes(t);
    out[prefix + t.name].assign(bytes.begin(), bytes.end());
  }
}

// The weights of a run's last checkpoint (both towers), by name.
inline TensorBytes weight_bytes(const std::filesystem::path& run) {
  const std::filesystem::path folder = model::resolve_checkpoint(run);
  TensorBytes out;
  for (const char* file : {"model.safetensors", "text/model.safetensors"})
    add_tensor_bytes(folder / file, std::string(file) + ":", out);
  return out;
}

// The training state of a run's last checkpoint (AdamW moments, RNG, step), by name.
inline TensorBytes state_bytes(const std::filesystem::path& run) {
  TensorBytes out;
  add_tensor_bytes(model::resolve_checkpoint(run) / "state.safetensors", "", out);
  return out;
}

}  // namespace cadclip::testing
