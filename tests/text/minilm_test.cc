// The real all-MiniLM-L6-v2 end to end: cadclip's sentence embeddings against
// the sentence-transformers vectors that make_text_fixtures.py committed.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "cadclip/core/safetensors.h"
#include "cadclip/text/text_model.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

TEST(MiniLm, SentenceEmbeddingsEqualSentenceTransformers) {
  if (!std::filesystem::exists(testing::minilm_dir() / "model.safetensors"))
    GTEST_SKIP() << "no all-MiniLM-L6-v2 at " << testing::minilm_dir();
  const auto sentences =
      testing::read_json("corpus.json")["minilm_sentences"].get<std::vector<std::string>>();
  ASSERT_GE(sentences.size(), 20u);
  const auto file = SafetensorsReader::open(testing::data_dir() / "minilm_expected.safetensors");
  const TensorInfo& info = file.at("embeddings");
  std::vector<float> values = file.to_f32(info);
  const torch::Tensor expected = at::from_blob(values.data(), info.shape, at::kFloat);

  const TextModel model = load_text_model(testing::minilm_dir());
  EXPECT_EQ(model.pooling, Pooling::kMean);  // from 1_Pooling/config.json
  EXPECT_EQ(model.max_length, 256);          // from sentence_bert_config.json
  const torch::Tensor got = model.embed(sentences);
  ASSERT_EQ(got.sizes(), expected.sizes());
  const torch::Tensor cosine = (got * expected).sum(1);
  std::printf("all-MiniLM-L6-v2, %zu sentences: cosine with sentence-transformers min %.7f\n",
              sentences.size(), cosine.min().item<double>());
  std::printf("  \"%s\" -> [%.5f, %.5f, %.5f, %.5f, ...] cosine %.7f\n", sentences[0].c_str(),
              got[0][0].item<double>(), got[0][1].item<double>(), got[0][2].item<double>(),
              got[0][3].item<double>(), cosine[0].item<double>());
  for (size_t i = 0; i < sentences.size(); ++i)
    EXPECT_GE(cosine[static_cast<int64_t>(i)].item<double>(), 0.9999)
        << "sentence " << i << " '" << sentences[i].substr(0, 60) << "'";
  // One at a time (no padding) gives the same vectors as the batch.
  const torch::Tensor single = model.embed(std::span(sentences).subspan(2, 1));
  EXPECT_LT((single[0] - got[2]).abs().max().item<double>(), 1e-5);
}

}  // namespace
}  // namespace cadclip::text
