// Ranking by the facts a text states (index/query_facts.h), on built
// libraries whose facts are known: the parts that meet every fact come
// first in the embedding's order, then those that meet one fewer; "six bolt
// holes" means six equal holes whatever else the part has; designations
// ("M8 nut", "M8x40 bolt", "washer M10") find their own size before the
// next one; --strict-numbers and facts=off keep their meaning.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cadclip/index/searcher.h"
#include "cadclip/index/stored_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "index_fixture.h"

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

constexpr int kDim = 8;  // the tiny checkpoint's embedding size

Item part(const std::string& id, std::array<double, 3> size, std::vector<double> holes,
          std::vector<data::Shaft> shafts = {}) {
  Item item;
  item.id = id;
  item.name = id;
  for (int i = 0; i < 3; ++i) item.size_mm[i] = size[i];
  item.faces = 10;
  item.holes = static_cast<int64_t>(holes.size());
  std::sort(holes.begin(), holes.end());
  item.hole_diameters_mm = std::move(holes);
  item.shafts = std::move(shafts);
  return item;
}

class FactRankingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    at::set_num_threads(1);
    root_ = new fs::path(testing::fresh_folder("cadclip_fact_ranking_test"));
    std::vector<Item> items;
    char id[32];
    // Flanges: 3 to 11 equal bolt holes around a centre bore, 20 of each.
    for (int bolts = 3; bolts <= 11; ++bolts) {
      for (int n = 0; n < 20; ++n) {
        std::snprintf(id, sizeof id, "flange_%02d_%02d", bolts, n);
        std::vector<double> holes(static_cast<size_t>(bolts), 9.0);
        holes.push_back(40);
        items.push_back(part(id, {120, 120, 20}, holes));
      }
    }
    // Nuts M6, M8, M10 (the thread hole at D1), washers M8, M10 (ISO 7089:
    // 8.4, 10.5), 30 of each.
    for (int n = 0; n < 30; ++n) {
      std::snprintf(id, sizeof id, "nut_m6_%02d", n);
      items.push_back(part(id, {11.5, 10, 5.2}, {4.917}));
      std::snprintf(id, sizeof id, "nut_m8_%02d", n);
      items.push_back(part(id, {14.4, 13, 6.8}, {6.647}));
      std::snprintf(id, sizeof id, "nut_m10_%02d", n);
      items.push_back(part(id, {18.5, 16, 8.4}, {8.376}));
      std::snprintf(id, sizeof id, "washer_m8_%02d", n);
      items.push_back(part(id, {16, 16, 1.6}, {8.4}));
      std::snprintf(id, sizeof id, "washer_m10_%02d", n);
      items.push_back(part(id, {20, 20, 2}, {10.5}));
    }
    // Hex bolts (ISO 4014): a head s across flats and k high (no round
    // faces) and the shank at d, then the thread at d3, on one axis; M8 x 35,
    // 40, 45 and M10 x 40, 20 of each.
    auto bolt = [&](const char* name, int n, double d, double d3, double s, double k, double l,
                    double b) {
      std::snprintf(id, sizeof id, "%s_%02d", name, n);
      std::vector<data::Shaft> shafts = {{d, k, k + l - b, 0}, {d3, k + l - b, k + l - 0.6, 0}};
      items.push_back(part(id, {2 * s / std::sqrt(3.0), s, k + l}, {}, shafts));
    };
    for (int n = 0; n < 20; ++n) {
      bolt("bolt_m8x35", n, 8, 6.466, 13, 5.3, 35, 22);
      bolt("bolt_m8x40", n, 8, 6.466, 13, 5.3, 40, 22);
      bolt("bolt_m8x45", n, 8, 6.466, 13, 5.3, 45, 22);
      bolt("bolt_m10x40", n, 10, 8.16, 16, 6.4, 40, 26);
    }
    // Gears of 20, 24 and 30 teeth (a set of z tips and one of 2z flanks),
    // and shafts of three and four steps, 20 of each.
    for (int n = 0; n < 20; ++n) {
      for (const int64_t teeth : {20, 24, 30}) {
        std::snprintf(id, sizeof id, "gear_%02lld_%02d", static_cast<long long>(teeth), n);
        Item gear = part(id, {2.0 * teeth + 4, 2.0 * teeth + 4, 10}, {12});
        gear.repeats = {teeth, 2 * teeth};
        items.push_back(std::move(gear));
      }
      std::snprintf(id, sizeof id, "shaft3_%02d", n);
      items.push_back(
          part(id, {90, 30, 30}, {}, {{20, 0, 30, 0}, {30, 30, 60, 0}, {20, 60, 90, 0}}));
      std::snprintf(id, sizeof id, "shaft4_%02d", n);
      items.push_back(part(id, {120, 30, 30}, {},
                           {{20, 0, 30, 0}, {30, 30, 60, 0}, {25, 60, 90, 0}, {15, 90, 120, 0}}));
    }
    write_stored_index(*root_ / "index",
                       testing::random_library(*root_ / "run", std::move(items), 7, kDim),
                       {.factory = "Flat"});
    searcher_ = new Searcher(Searcher::open(*root_ / "index"));
  }
  static void TearDownTestSuite() {
    delete searcher_;
    fs::remove_all(*root_);
    delete root_;
  }

  static SearchResult ask(const std::string& text, int64_t k,
                          const SearchOptions& base = SearchOptions{}) {
    SearchOptions options = base;
    options.k = k;
    return searcher_->query_text(text, options);  // hits point into the searcher's catalog
  }

  // The hits' ids that start with `prefix`, in rank order, and how many came first.
  static int64_t leading(const SearchResult& r, const std::string& prefix) {
    int64_t n = 0;
    while (n < static_cast<int64_t>(r.hits.size()) && r.hits[n].item->id.starts_with(prefix)) ++n;
    return n;
  }

  static fs::path* root_;
  static Searcher* searcher_;
};

fs::path* FactRankingTest::root_ = nullptr;
Searcher* FactRankingTest::searcher_ = nullptr;

TEST_F(FactRankingTest, SixBoltHolesMeansSixEqualHolesFirst) {
  const SearchResult r = ask("flange with six bolt holes", 25);
  ASSERT_EQ(r.stated.size(), 1u);
  EXPECT_EQ(r.stated[0].to_string(), "equal_holes=6");
  EXPECT_EQ(r.stated[0].because, "six bolt holes");
  // Six bolt holes and a centre bore: seven in all, six of one diameter.
  EXPECT_EQ(r.meeting_all, 20);
  EXPECT_EQ(leading(r, "flange_06_"), 20);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(r.hits[i].meets[0]);
  for (int i = 20; i < 25; ++i) EXPECT_FALSE(r.hits[i].meets[0]);
  // Within those that meet as many facts, the embedding's order.
  for (int i = 1; i < 20; ++i) EXPECT_GE(r.hits[i - 1].score, r.hits[i].score);
  for (int i = 21; i < 25; ++i) EXPECT_GE(r.hits[i - 1].score, r.hits[i].score);
  // "6" reads as "six".
  EXPECT_EQ(leading(ask("flange with 6 bolt holes", 20), "flange_06_"), 20);
}

TEST_F(FactRankingTest, TeethAndStepsByTheirCounts) {
  SearchResult r = ask("spur gear with 24 teeth", 20);
  ASSERT_EQ(r.stated.size(), 1u);
  EXPECT_EQ(r.stated[0].to_string(), "repeats=24");
  EXPECT_EQ(r.meeting_all, 20);
  EXPECT_EQ(leading(r, "gear_24_"), 20);
  // A gear's flanks are a set of twice its teeth: the 20-tooth gears meet
  // "40 teeth" too (the reading counts sets, not what they are).
  EXPECT_EQ(ask("gear with 40 teeth", 20).meeting_all, 20);
  r = ask("stepped shaft with three steps", 20);
  EXPECT_EQ(r.stated[0].to_string(), "steps=3");
  EXPECT_EQ(leading(r, "shaft3_"), 20);
  EXPECT_EQ(leading(ask("shaft with four diameter sections", 20), "shaft4_"), 20);
}

TEST_F(FactRankingTest, FactsOffIsTheEmbeddingAlone) {
  SearchOptions off;
  off.rank_by_facts = false;
  const SearchResult r = ask("flange with six bolt holes", 25, off);
  EXPECT_TRUE(r.stated.empty());
  EXPECT_EQ(r.meeting_all, -1);
  for (size_t i = 1; i < r.hits.size(); ++i) EXPECT_GE(r.hits[i - 1].score, r.hits[i].score);
  for (const Hit& h : r.hits) EXPECT_TRUE(h.meets.empty());
}

TEST_F(FactRankingTest, StrictNumbersMakeTheFactsHardConditions) {
  SearchOptions strict;
  strict.strict_numbers = true;
  const SearchResult r = ask("flange with six bolt holes", 50, strict);
  EXPECT_TRUE(r.stated.empty());
  ASSERT_EQ(r.applied.conditions.size(), 1u);
  EXPECT_EQ(r.applied.conditions[0].to_string(), "equal_holes=6");
  EXPECT_EQ(r.candidates, 20);
  EXPECT_EQ(r.hits.size(), 20u);
}

// The rank of each hit whose id starts with `prefix`.
std::vector<int64_t> ranks_of(const SearchResult& r, const std::string& prefix) {
  std::vector<int64_t> out;
  for (const Hit& h : r.hits)
    if (h.item->id.starts_with(prefix)) out.push_back(h.rank);
  return out;
}

TEST_F(FactRankingTest, ANutByItsThreadBeforeTheNextSize) {
  // The M8 bolts meet "M8" too (their shank is the thread's size) but not
  // the nut's shape; the M10 and M6 nuts meet neither, and come after every
  // M8 nut.
  SearchResult r = ask("M8 nut", 200);
  ASSERT_EQ(r.stated.size(), 2u);
  EXPECT_EQ(r.stated[0].to_string(), "thread=M8");
  EXPECT_EQ(r.stated[1].to_string(), "dims=14.26..15.17x12.87..13.13x6.43..6.87");
  EXPECT_EQ(r.meeting_all, 30);
  EXPECT_EQ(leading(r, "nut_m8_"), 30);
  const std::vector<int64_t> m8 = ranks_of(r, "nut_m8_"), m10 = ranks_of(r, "nut_m10_"),
                             m6 = ranks_of(r, "nut_m6_");
  ASSERT_EQ(m8.size(), 30u);
  ASSERT_FALSE(m10.empty());
  EXPECT_LT(m8.back(), m10.front());
  if (!m6.empty()) EXPECT_LT(m8.back(), m6.front());
  for (const Hit& h : r.hits) {
    EXPECT_EQ(h.meets[0], h.item->id.starts_with("nut_m8_") || h.item->id.starts_with("bolt_m8x"))
        << h.item->id;
    EXPECT_EQ(h.meets[1], h.item->id.starts_with("nut_m8_")) << h.item->id;
  }
  r = ask("hex nut M10", 200);
  EXPECT_LT(ranks_of(r, "nut_m10_").back(), ranks_of(r, "nut_m8_").front());
  // A washer's bore is the bolt's clearance, not its thread: only washers meet it.
  r = ask("washer M10", 30);
  EXPECT_EQ(r.stated[0].to_string(), "clearance=M10");
  EXPECT_EQ(r.meeting_all, 30);
  EXPECT_EQ(leading(r, "washer_m10_"), 30);
  // An M10 nut's thread hole (8.38 mm) and the flanges' 9 mm bolt holes are
  // M8 clearances too, but only the M8 washers have ISO 7089's 16 x 1.6; the
  // M10 washers meet neither and come after every M8 washer.
  r = ask("M8 washer", 300);
  EXPECT_EQ(r.meeting_all, 30);
  EXPECT_EQ(leading(r, "washer_m8_"), 30);
  EXPECT_LT(ranks_of(r, "washer_m8_").back(), ranks_of(r, "washer_m10_").front());
}

TEST_F(FactRankingTest, ABoltByThreadAndLength) {
  SearchResult r = ask("M8x40 hex bolt", 20);
  ASSERT_EQ(r.stated.size(), 2u);
  EXPECT_EQ(r.stated[0].to_string(), "thread=M8x40");
  EXPECT_EQ(r.stated[1].key, FilterKey::kDims);  // l + k, e, s of ISO 4017 M8
  EXPECT_EQ(r.meeting_all, 20);
  EXPECT_EQ(leading(r, "bolt_m8x40_"), 20);
  EXPECT_EQ(leading(ask("M8 bolt 45 mm long", 20), "bolt_m8x45_"), 20);
  EXPECT_EQ(leading(ask("M10x40", 20), "bolt_m10x40_"), 20);
  // Without a length every M8 bolt meets the thread and the head; an M8 nut
  // meets the thread alone and comes after them, before every M10 bolt.
  r = ask("M8 bolt", 1000);  // every part
  EXPECT_EQ(r.meeting_all, 60);
  EXPECT_EQ(leading(r, "bolt_m8x"), 60);
  EXPECT_LT(ranks_of(r, "nut_m8_").back(), ranks_of(r, "bolt_m10x").front());
}

}  // namespace
}  // namespace cadclip::index
