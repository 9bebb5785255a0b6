// The numbers read from captions for the quantity branch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "cadclip/text/quantities.h"

namespace cadclip::text {
namespace {

using Kind = QuantityKind;

void expect_quantities(std::string_view text, const std::vector<Quantity>& expected) {
  const std::vector<Quantity> got = extract_quantities(text);
  ASSERT_EQ(got.size(), expected.size()) << text;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].value, expected[i].value, 1e-9) << text << " #" << i;
    EXPECT_EQ(got[i].kind, expected[i].kind) << text << " #" << i;
  }
}

TEST(Quantities, ReadsNumbersWithTheirUnitsInOrder) {
  expect_quantities("The mounting plate measures 250 by 200 by 5 mm.",
                    {{250, Kind::kBare}, {200, Kind::kBare}, {5, Kind::kLength}});
  expect_quantities("eight holes, 3.5 mm in diameter, on a 179.5 bolt circle",
                    {{8, Kind::kBare}, {3.5, Kind::kLength}, {179.5, Kind::kBare}});
  expect_quantities("250x200x5mm", {{250, Kind::kBare}, {200, Kind::kBare}, {5, Kind::kLength}});
  expect_quantities("walls 11 millimeters thick, 4 in the base",
                    {{11, Kind::kLength}, {4, Kind::kBare}});
}

TEST(Quantities, ConvertsLengthsToMillimetres) {
  expect_quantities("a 2 cm cube, 0.5 m long, 1/4 inch holes, 3\" pipe, 2 ft, 40 µm",
                    {{20, Kind::kLength},
                     {500, Kind::kLength},
                     {6.35, Kind::kLength},
                     {76.2, Kind::kLength},
                     {609.6, Kind::kLength},
                     {0.04, Kind::kLength}});
  expect_quantities("bent at 45°, a 30-degree chamfer, 90 deg",
                    {{45, Kind::kAngle}, {30, Kind::kAngle}, {90, Kind::kAngle}});
}

TEST(Quantities, ADesignationAfterANumberIsNoUnit) {
  // "M8" is a thread, not metres; "4 M6 holes" four of them.
  expect_quantities("DIN 912 M8x20", {{912, Kind::kBare}, {8, Kind::kBare}, {20, Kind::kBare}});
  expect_quantities("4 M6 holes, 2 m long",
                    {{4, Kind::kBare}, {6, Kind::kBare}, {2000, Kind::kLength}});
}

TEST(Quantities, ReadsThousandsDecimalsAndNumberWords) {
  expect_quantities(
      "1,200 mm and 150, 90 and .5",
      {{1200, Kind::kLength}, {150, Kind::kBare}, {90, Kind::kBare}, {0.5, Kind::kBare}});
  expect_quantities("Twelve teeth and four slots; someone wrote None",
                    {{12, Kind::kBare}, {4, Kind::kBare}});
  expect_quantities("an M8 thread, -5 offset, version 2.",
                    {{8, Kind::kBare}, {5, Kind::kBare}, {2, Kind::kBare}});
  expect_quantities("no numbers here", {});
  const std::vector<Quantity> mixed = extract_quantities("two 5 mm holes, ten mm apart");
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_TRUE(mixed[0].spelled);  // a count in words
  EXPECT_FALSE(mixed[1].spelled);
  EXPECT_TRUE(mixed[2].spelled);
  EXPECT_EQ(mixed[2].kind, Kind::kLength);
  EXPECT_EQ(extract_quantities("1 2 3 4 5", 3).size(), 3u);
}

TEST(Quantities, BatchesPadAndSelectRows) {
  const std::vector<std::string> texts = {"no numbers", "5 mm and 6", "7"};
  const QuantityBatch batch = quantity_batch(texts);
  ASSERT_EQ(batch.values.sizes(), (at::IntArrayRef{3, 2}));
  EXPECT_EQ(batch.mask.sum().item<int64_t>(), 3);
  EXPECT_FALSE(batch.mask[0].any().item<bool>());
  EXPECT_FLOAT_EQ(batch.values[1][0].item<float>(), 5.f);
  EXPECT_EQ(batch.kinds[1][0].item<int64_t>(), static_cast<int64_t>(Kind::kLength));
  const QuantityBatch picked = batch.index_select(at::tensor({2, 0}, at::kLong));
  ASSERT_EQ(picked.values.sizes(), (at::IntArrayRef{2, 1}));
  EXPECT_FLOAT_EQ(picked.values[0][0].item<float>(), 7.f);
  EXPECT_FALSE(picked.mask[1][0].item<bool>());
  // A batch with no numbers at all still has one (masked) column.
  const std::vector<std::string> none = {"a", "b"};
  EXPECT_EQ(quantity_batch(none).values.size(1), 1);
}

}  // namespace
}  // namespace cadclip::text
