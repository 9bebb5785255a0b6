// Query encoding in bfloat16 matmuls: what the option accepts, that the
// scope is thread-local and restores, and that the real all-MiniLM-L6-v2
// keeps its sentence embeddings in bfloat16 (where this CPU has it).
#include "cadclip/text/matmul_precision.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

#include "cadclip/core/error.h"
#include "cadclip/text/text_model.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

TEST(MatmulPrecision, ParsesTheThreeNamesAndRefusesOthersByName) {
  EXPECT_EQ(parse_matmul_precision("fp32", "--text-matmul"), MatmulPrecision::kFloat32);
  EXPECT_EQ(parse_matmul_precision("auto", "--text-matmul"),
            cpu_has_fast_bf16() ? MatmulPrecision::kBFloat16 : MatmulPrecision::kFloat32);
  if (cpu_has_fast_bf16()) {
    EXPECT_EQ(parse_matmul_precision("bf16", "--text-matmul"), MatmulPrecision::kBFloat16);
  } else {
    try {
      (void)parse_matmul_precision("bf16", "--text-matmul");
      ADD_FAILURE() << "bf16 accepted on a CPU without fast bfloat16";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("AVX512-BF16"), std::string::npos) << e.what();
    }
  }
  try {
    (void)parse_matmul_precision("fp16", "--text-matmul");
    ADD_FAILURE() << "fp16 accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--text-matmul"), std::string::npos) << message;
    EXPECT_NE(message.find("'fp16'"), std::string::npos) << message;
    EXPECT_NE(message.find("auto, fp32, bf16"), std::string::npos) << message;
  }
  EXPECT_EQ(matmul_precision_name(MatmulPrecision::kBFloat16), "bf16");
  EXPECT_EQ(matmul_precision_name(MatmulPrecision::kFloat32), "fp32");
}

TEST(MatmulPrecision, ScopesNestRestoreAndStayOnTheirThread) {
  EXPECT_EQ(current_matmul_precision(), MatmulPrecision::kFloat32);
  {
    const TextMatmulScope outer(MatmulPrecision::kBFloat16);
    EXPECT_EQ(current_matmul_precision(), MatmulPrecision::kBFloat16);
    {
      const TextMatmulScope inner(MatmulPrecision::kFloat32);
      EXPECT_EQ(current_matmul_precision(), MatmulPrecision::kFloat32);
    }
    EXPECT_EQ(current_matmul_precision(), MatmulPrecision::kBFloat16);
    MatmulPrecision elsewhere = MatmulPrecision::kBFloat16;
    std::thread([&] { elsewhere = current_matmul_precision(); }).join();
    EXPECT_EQ(elsewhere, MatmulPrecision::kFloat32);
  }
  EXPECT_EQ(current_matmul_precision(), MatmulPrecision::kFloat32);
}

TEST(MatmulPrecision, MiniLmKeepsItsEmbeddingsInBFloat16) {
  if (!cpu_has_fast_bf16()) GTEST_SKIP() << "this CPU has neither AMX nor AVX512-BF16";
  if (!std::filesystem::exists(testing::minilm_dir() / "model.safetensors"))
    GTEST_SKIP() << "no all-MiniLM-L6-v2 at " << testing::minilm_dir();
  const auto sentences =
      testing::read_json("corpus.json")["minilm_sentences"].get<std::vector<std::string>>();
  const TextModel model = load_text_model(testing::minilm_dir());
  const torch::Tensor fp32 = model.embed(sentences);
  torch::Tensor bf16;
  {
    const TextMatmulScope scope(MatmulPrecision::kBFloat16);
    bf16 = model.embed(sentences);
  }
  const torch::Tensor cosine = (fp32 * bf16).sum(1) / (fp32.norm(2, 1) * bf16.norm(2, 1));
  std::printf("all-MiniLM-L6-v2, %zu sentences: bf16 matmuls against fp32, cosine min %.6f\n",
              sentences.size(), cosine.min().item<double>());
  EXPECT_GE(cosine.min().item<double>(), 0.999);
  // The bfloat16 GEMMs ran: the vectors are close, not equal.
  EXPECT_GT((fp32 - bf16).abs().max().item<double>(), 1e-6);
  // Leaving the scope gives the float32 vectors back exactly: the bfloat16
  // weights sit beside the float32 ones, never in their place.
  EXPECT_TRUE(at::equal(model.embed(sentences), fp32));
  {
    const TextMatmulScope scope(MatmulPrecision::kFloat32);
    EXPECT_TRUE(at::equal(model.embed(sentences), fp32));
  }
}

}  // namespace
}  // namespace cadclip::text
