// Last hidden states against transformers on random DeBERTa-v2, DeBERTa-v3
// and BERT checkpoints (padded batches of mixed lengths), and loading rules.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/text/deberta.h"
#include "cadclip/text/text_model.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

using testing::data_dir;

torch::Tensor read_tensor(const SafetensorsReader& file, const std::string& name) {
  const TensorInfo& info = file.at(name);
  std::vector<float> values = file.to_f32(info);
  return at::from_blob(values.data(), info.shape, at::kFloat).clone();
}

struct Reference {
  torch::Tensor ids, mask, hidden;
};

Reference read_reference(const std::string& model) {
  const auto file = SafetensorsReader::open(data_dir() / model / "reference.safetensors");
  return {read_tensor(file, "input_ids").to(at::kLong),
          read_tensor(file, "attention_mask").to(at::kLong),
          read_tensor(file, "last_hidden_state")};
}

// The largest difference at unpadded positions.
double parity_error(const std::string& model) {
  const Reference ref = read_reference(model);
  auto encoder = load_text_encoder(data_dir() / model);
  torch::NoGradGuard no_grad;
  const torch::Tensor hidden = encoder->forward(ref.ids, ref.mask);
  EXPECT_EQ(hidden.sizes(), ref.hidden.sizes());
  const torch::Tensor keep = ref.mask.to(at::kBool).unsqueeze(-1);
  const double error = (hidden - ref.hidden).abs().masked_select(keep).max().item<double>();
  std::printf("%s: largest difference from transformers %.2e\n", model.c_str(), error);
  return error;
}

void expect_mixed_lengths(const std::string& model) {
  const Reference ref = read_reference(model);
  const torch::Tensor lengths = ref.mask.sum(1);
  EXPECT_LT(lengths.min().item<int64_t>(), lengths.max().item<int64_t>()) << model;
}

TEST(TextEncoder, DebertaV2MatchesTransformers) {
  expect_mixed_lengths("deberta_v2");
  EXPECT_LT(parity_error("deberta_v2"), 1e-4);
}

TEST(TextEncoder, DebertaV3MatchesTransformers) {
  expect_mixed_lengths("deberta_v3");
  // The log-bucket branch runs only for |i - j| >= position_buckets / 2.
  const auto config = DebertaV2Config::from_file(data_dir() / "deberta_v3" / "config.json");
  ASSERT_GT(config.position_buckets, 0);
  EXPECT_GT(read_reference("deberta_v3").mask.sum(1).max().item<int64_t>(),
            config.position_buckets / 2);
  EXPECT_LT(parity_error("deberta_v3"), 1e-4);
}

TEST(TextEncoder, BertMatchesTransformers) {
  expect_mixed_lengths("bert");
  EXPECT_LT(parity_error("bert"), 1e-4);
}

TEST(TextEncoder, ReadsEveryDebertaOptionFromConfig) {
  const auto v2 = DebertaV2Config::from_file(data_dir() / "deberta_v2" / "config.json");
  EXPECT_TRUE(v2.relative_attention);
  EXPECT_FALSE(v2.share_att_key);
  EXPECT_TRUE(v2.position_biased_input);
  EXPECT_EQ(v2.conv_kernel_size, 3);
  EXPECT_EQ(v2.embedding_size, 24);
  EXPECT_EQ(v2.attention_span(), 12);
  const auto v3 = DebertaV2Config::from_file(data_dir() / "deberta_v3" / "config.json");
  EXPECT_TRUE(v3.share_att_key);
  EXPECT_TRUE(v3.norm_rel_ebd_layer_norm);
  EXPECT_TRUE(v3.c2p() && v3.p2c());
  EXPECT_FALSE(v3.position_biased_input);
  EXPECT_EQ(v3.attention_span(), 8);
  EXPECT_EQ(v3.max_relative_positions, 96);  // -1 resolves to max_position_embeddings
}

TEST(TextEncoder, LogBucketsAreSymmetricAndSaturate) {
  // bucket 8 (mid 4), max 96: exact inside the middle, logarithmic outside.
  const torch::Tensor r = relative_positions(40, 8, 96);
  EXPECT_EQ(r[5][3].item<int64_t>(), 2);
  EXPECT_EQ(r[3][5].item<int64_t>(), -2);
  EXPECT_TRUE(r.eq(-r.t()).all().item<bool>());
  EXPECT_LE(r.abs().max().item<int64_t>(), 8);
  EXPECT_TRUE(relative_positions(5, -1, -1).eq(relative_positions(5, 0, 0)).all().item<bool>());
}

TEST(TextEncoder, PaddingDoesNotChangeUnpaddedRows) {
  auto encoder = load_text_encoder(data_dir() / "deberta_v3");
  torch::NoGradGuard no_grad;
  const torch::Tensor ids = at::randint(4, 400, {1, 12}, at::kLong);
  const torch::Tensor alone = encoder->forward(ids, at::ones({1, 12}, at::kLong));
  const torch::Tensor padded_ids = at::cat({ids, at::zeros({1, 7}, at::kLong)}, 1);
  const torch::Tensor mask =
      at::cat({at::ones({1, 12}, at::kLong), at::zeros({1, 7}, at::kLong)}, 1);
  const torch::Tensor padded = encoder->forward(padded_ids, mask).narrow(1, 0, 12);
  EXPECT_LT((alone - padded).abs().max().item<double>(), 1e-5);
}

// A tower split before any layer computes what the whole tower does, bit for
// bit: the trainer caches the lower part and runs the upper (DeBERTa-v2's
// conv layer after layer 0 included), and a split outside the tower is refused.
TEST(TextEncoder, SplitBeforeAnyLayerIsTheWholeTower) {
  for (const std::string model : {"bert", "deberta_v2", "deberta_v3"}) {
    const Reference ref = read_reference(model);
    auto encoder = load_text_encoder(data_dir() / model);
    torch::NoGradGuard no_grad;
    const torch::Tensor whole = encoder->forward(ref.ids, ref.mask);
    ASSERT_GE(encoder->layer_count(), 2) << model;
    for (int64_t first = 0; first <= encoder->layer_count(); ++first) {
      const torch::Tensor below = encoder->hidden_before(ref.ids, ref.mask, first);
      EXPECT_TRUE(at::equal(encoder->forward_from(below, ref.mask, first), whole))
          << model << " split before layer " << first;
    }
    EXPECT_FALSE(at::equal(encoder->hidden_before(ref.ids, ref.mask, 1), whole)) << model;
    try {
      encoder->forward_from(whole, ref.mask, encoder->layer_count() + 1);
      ADD_FAILURE() << model << ": a split past the last layer was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be split before layer"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Pooling, ClsAndMaskedMean) {
  const torch::Tensor hidden = at::arange(12, at::kFloat).view({1, 4, 3});
  const torch::Tensor mask = at::tensor({1, 1, 0, 0}, at::kLong).view({1, 4});
  EXPECT_TRUE(pool(hidden, mask, Pooling::kCls).equal(at::tensor({0.f, 1.f, 2.f}).view({1, 3})));
  EXPECT_TRUE(
      pool(hidden, mask, Pooling::kMean).equal(at::tensor({1.5f, 2.5f, 3.5f}).view({1, 3})));
  EXPECT_EQ(parse_pooling("mean"), Pooling::kMean);
  EXPECT_FALSE(parse_pooling("max").has_value());
}

class TempFolder {
 public:
  TempFolder() {
    path_ = std::filesystem::temp_directory_path() /
            ("cadclip_text_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// Writes the BERT fixture's weights to `folder` except the tensors `drop`,
// with an extra unused tensor, without the "bert." prefix and as F32.
void write_bert_copy(const std::filesystem::path& folder, const std::string& drop) {
  std::filesystem::copy_file(data_dir() / "bert" / "config.json", folder / "config.json");
  const auto source = SafetensorsReader::open(data_dir() / "bert" / "model.safetensors");
  SafetensorsWriter writer;
  for (const TensorInfo& info : source.tensors()) {
    std::string name = info.name;
    if (name.starts_with("bert.")) name = name.substr(5);
    if (name == drop) continue;
    const std::vector<float> values = source.to_f32(info);
    writer.add_f32(name, info.shape, values);
  }
  const std::vector<float> extra(4, 1.f);
  writer.add_f32("pooler.dense.bias", {4}, extra);
  writer.write(folder / "model.safetensors");
}

TEST(LoadWeights, WithoutPrefixAndWithExtraTensors) {
  TempFolder folder;
  write_bert_copy(folder.path(), "");
  auto copy = load_text_encoder(folder.path());
  auto original = load_text_encoder(data_dir() / "bert");
  for (const auto& item : original->named_parameters())
    EXPECT_TRUE(item.value().equal(copy->named_parameters()[item.key()])) << item.key();
}

TEST(LoadWeights, MissingTensorsAreNamed) {
  TempFolder folder;
  write_bert_copy(folder.path(), "encoder.layer.1.output.dense.weight");
  try {
    load_text_encoder(folder.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.layer.1.output.dense.weight"), std::string::npos)
        << e.what();
  }
}

TEST(LoadWeights, UnsupportedModelTypeIsAClearError) {
  TempFolder folder;
  std::ofstream(folder.path() / "config.json") << R"({"model_type": "gpt2"})";
  try {
    load_text_encoder(folder.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpt2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cadclip::text

namespace cadclip::text {
namespace {

TEST(TextEncoder, InferenceFollowsInPlaceWeightUpdates) {
  // The fused query/key/value weights of no-grad runs must see optimizer steps.
  auto encoder = load_text_encoder(testing::data_dir() / "bert");
  const Reference ref = read_reference("bert");
  torch::Tensor before;
  {
    torch::NoGradGuard no_grad;
    before = encoder->forward(ref.ids, ref.mask);
    // Random, since a constant shift of a key weight cancels after LayerNorm.
    torch::Tensor key = encoder->named_parameters()["encoder.layer.0.attention.self.key.weight"];
    key.add_(at::randn_like(key));
  }
  torch::Tensor after_no_grad;
  {
    torch::NoGradGuard no_grad;
    after_no_grad = encoder->forward(ref.ids, ref.mask);
  }
  const torch::Tensor after_grad = encoder->forward(ref.ids, ref.mask).detach();
  const torch::Tensor keep = ref.mask.to(at::kBool).unsqueeze(-1);
  EXPECT_GT((after_no_grad - before).abs().masked_select(keep).max().item<double>(), 1e-4);
  EXPECT_LT((after_no_grad - after_grad).abs().masked_select(keep).max().item<double>(), 1e-5);
}

TEST(TextEncoder, ConcurrentInferenceMatchesSequential) {
  // The search service embeds from several threads at once, under
  // InferenceMode; the first calls race to build the cached (fused,
  // reordered) weights, which later no-grad calls outside InferenceMode reuse.
  auto encoder = load_text_encoder(testing::data_dir() / "bert");
  const Reference ref = read_reference("bert");
  std::vector<torch::Tensor> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      c10::InferenceMode inference;  // per thread, as Searcher::embed_text does
      for (int repeat = 0; repeat < 5; ++repeat) got[i] = encoder->forward(ref.ids, ref.mask);
    });
  for (auto& thread : threads) thread.join();
  torch::NoGradGuard no_grad;
  const torch::Tensor expected = encoder->forward(ref.ids, ref.mask);
  for (const auto& tensor : got) EXPECT_TRUE(tensor.equal(expected));
}

}  // namespace
}  // namespace cadclip::text
