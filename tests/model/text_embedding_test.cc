// The text path of the two-tower model: captions tokenized and cut at the
// limit (counted), token rows padded to their longest.
#include "cadclip/model/text_embedding.h"

#include <gtest/gtest.h>

#include <vector>

#include "cadclip/text/length_groups.h"
#include "tiny_model.h"

namespace cadclip::model {
namespace {

TEST(TextEmbedderTest, CutsLongCaptionsAtTheLimitEndingInSepAndCountsThem) {
  BuiltModel built = build_model(testing::tiny_model_config(/*max_text_length=*/6));
  const text::Tokenizer& tokenizer = *built.text.tokenizer;
  const TextEmbedder tokens(built);
  const std::vector<int64_t> short_row = tokens.tokenize("a nut");
  const std::vector<int64_t> long_row = tokens.tokenize("a flange with six holes and a thin rim");
  EXPECT_EQ(tokens.truncated(), 1);
  EXPECT_EQ(short_row, tokenizer.encode("a nut"));
  EXPECT_EQ(long_row, tokenizer.encode("a flange with six holes and a thin rim", 6));
  EXPECT_EQ(long_row.back(), tokenizer.sep_id());
  const std::vector<std::vector<int64_t>> rows = {short_row, long_row};
  const auto [ids, mask] = text::pad_rows(rows, tokenizer.pad_id());
  EXPECT_EQ(ids.sizes(), (at::IntArrayRef{2, 6}));
  EXPECT_EQ(mask.sum().item<int64_t>(), static_cast<int64_t>(short_row.size() + 6));
  EXPECT_EQ(ids[0][static_cast<int64_t>(short_row.size())].item<int64_t>(), tokenizer.pad_id());
}

}  // namespace
}  // namespace cadclip::model
