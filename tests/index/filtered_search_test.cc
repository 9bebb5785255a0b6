// Filters inside the vector search, on a built library of 3,000 parts whose
// sizes, faces, holes, file types and imported fields are known: every filter
// returns exactly the best k of the parts that pass (against a brute-force
// search over them), on an exact index and on an inverted file that probes
// few lists, including a filter that keeps 1% of the library; the minimum
// score, "same size" and "ignore mirrored" controls; --strict-numbers.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <tuple>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/searcher.h"
#include "cadclip/index/stored_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "index_fixture.h"

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;

constexpr int kParts = 3000;
constexpr int kDim = 8;  // the tiny checkpoint's embedding size

const char* const kMaterials[] = {"steel", "aluminium", "brass", "stainless steel"};

// Part i's catalog entry: every fact a function of i.
Item part_item(int i) {
  Item item;
  char id[32];
  std::snprintf(id, sizeof id, "p%05d", i);
  item.id = id;
  item.name = id;
  item.size_mm[0] = 10 + (i * 7) % 300;
  item.size_mm[1] = 5 + (i * 13) % 200;
  item.size_mm[2] = 1 + i % 50;
  item.faces = 4 + i % 60;
  item.holes = i % 9;
  for (int h = 0; h < item.holes; ++h) item.hole_diameters_mm.push_back(3 + (i + h) % 12);
  std::sort(item.hole_diameters_mm.begin(), item.hole_diameters_mm.end());
  item.file_type = i % 3 == 0 ? "step" : i % 3 == 1 ? "iges" : "brep";
  char number[32];
  std::snprintf(number, sizeof number, "PN-%05d", i);
  item.metadata = {{"part_number", number},
                   {"material", kMaterials[i % 4]},
                   {"project", i % 100 == 7 ? "apollo" : "gemini"}};
  if (i % 10 == 0) item.metadata.pop_back();  // some parts have no project
  return item;
}

class FilteredSearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    at::set_num_threads(1);
    root_ = new fs::path(testing::fresh_folder("cadclip_filtered_search_test"));
    std::vector<Item> items;
    for (int i = 0; i < kParts; ++i) items.push_back(part_item(i));
    StoredIndex library = testing::random_library(*root_ / "run", std::move(items), 5, kDim);
    write_stored_index(*root_ / "flat", library, {.factory = "Flat"});
    // 32 lists, 2 probed: an unfiltered search sees about 190 of the 3,000 rows.
    write_stored_index(*root_ / "ivf", library,
                       {.factory = "IVF32,Flat", .search_params = "nprobe=2"});
    stored_ = new StoredIndex(std::move(library));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
    delete stored_;
  }

  // The exact best k of the parts that pass `keep`, for the query part `id`.
  static std::vector<std::string> brute_force(const std::string& id, int64_t k,
                                              const std::function<bool(const Item&)>& keep) {
    const auto& parts = stored_->parts;
    const auto query = std::find_if(parts.begin(), parts.end(),
                                    [&](const StoredPart& p) { return p.item.id == id; });
    std::vector<std::pair<float, std::string>> scored;
    for (const StoredPart& p : parts) {
      if (!keep(p.item)) continue;
      float dot = 0;
      for (int d = 0; d < kDim; ++d) dot += p.embedding[d] * query->embedding[d];
      scored.emplace_back(dot, p.item.id);
    }
    std::sort(scored.begin(), scored.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> ids;
    for (size_t i = 0; i < scored.size() && static_cast<int64_t>(i) < k; ++i)
      ids.push_back(scored[i].second);
    return ids;
  }

  // Searches both indexes with `filter` and checks them against the brute force.
  static void expect_exact(const std::string& filter, const std::function<bool(const Item&)>& keep,
                           int64_t k = 10, const std::string& query = "p00042") {
    SCOPED_TRACE(filter);
    SearchOptions options;
    options.k = k;
    options.filter = parse_filter(filter);
    const std::vector<std::string> truth = brute_force(query, k, keep);
    int64_t passing = 0;
    for (const StoredPart& p : stored_->parts) passing += keep(p.item);
    // Through the vector index (no direct scoring): the exact index, and the
    // inverted file probing every list, must give the exact answer; probing
    // 2 lists, it must still give k parts that pass, and the exact answer
    // when so few pass that it probes them all (2 / sqrt(share) >= 32). With
    // direct scoring (every filter here passes fewer than its 4,096 rows),
    // the inverted file's answer is exact.
    const bool saturated = 2.0 / std::sqrt(static_cast<double>(passing) / kParts) >= 32;
    for (const auto& [kind, params, exact, direct_rows] :
         {std::tuple{"flat", "", true, 0}, std::tuple{"ivf", "nprobe=32", true, 0},
          std::tuple{"ivf", "", saturated, 0}, std::tuple{"ivf", "", true, 4096}}) {
      SCOPED_TRACE(std::string(kind) + " " + params + " direct rows " +
                   std::to_string(direct_rows));
      const Searcher searcher =
          Searcher::open(*root_ / kind, {.search_params = params, .direct_rows = direct_rows});
      const SearchResult result = searcher.query_item(query, options);
      EXPECT_EQ(result.candidates, passing);
      std::vector<std::string> ids;
      for (const Hit& h : result.hits) {
        ids.push_back(h.item->id);
        EXPECT_TRUE(keep(*h.item)) << h.item->id << " does not pass";
      }
      if (exact) EXPECT_EQ(ids, truth);
      EXPECT_EQ(static_cast<int64_t>(ids.size()), std::min<int64_t>(k, passing));
    }
  }

  static fs::path* root_;
  static StoredIndex* stored_;
};

fs::path* FilteredSearchTest::root_ = nullptr;
StoredIndex* FilteredSearchTest::stored_ = nullptr;

bool any_hole(const Item& item, double low, double high) {
  return std::any_of(item.hole_diameters_mm.begin(), item.hole_diameters_mm.end(),
                     [&](double d) { return d >= low && d <= high; });
}

TEST_F(FilteredSearchTest, SizeFilters) {
  expect_exact("x<100", [](const Item& p) { return p.size_mm[0] < 100; });
  expect_exact("y=50..80", [](const Item& p) { return p.size_mm[1] >= 50 && p.size_mm[1] <= 80; });
  expect_exact("z>=40", [](const Item& p) { return p.size_mm[2] >= 40; });
  expect_exact("size<=120", [](const Item& p) { return p.sorted_size_mm()[0] <= 120; });
  expect_exact("middle>100", [](const Item& p) { return p.sorted_size_mm()[1] > 100; });
  expect_exact("smallest<5", [](const Item& p) { return p.sorted_size_mm()[2] < 5; });
  expect_exact("extent=150±1", [](const Item& p) {
    return std::any_of(p.size_mm, p.size_mm + 3, [](double v) { return v >= 149 && v <= 151; });
  });
  expect_exact("dims=200..310x100..210x20..50", [](const Item& p) {
    const auto s = p.sorted_size_mm();
    return s[0] >= 200 && s[0] <= 310 && s[1] >= 100 && s[1] <= 210 && s[2] >= 20 && s[2] <= 50;
  });
  expect_exact("size<10cm", [](const Item& p) { return p.sorted_size_mm()[0] < 100; });
  // Any of several shapes: the facts' pass over every row, not only the
  // first shape; the library has parts that only the first, and parts that
  // only the second, lets through.
  auto first = [](const Item& p) {
    const auto s = p.sorted_size_mm();
    return s[0] >= 200 && s[0] <= 310 && s[1] >= 100 && s[1] <= 210 && s[2] >= 20 && s[2] <= 50;
  };
  auto second = [](const Item& p) {
    const auto s = p.sorted_size_mm();
    return s[0] >= 50 && s[0] <= 150 && s[1] >= 30 && s[1] <= 100 && s[2] >= 1 && s[2] <= 40;
  };
  int64_t first_only = 0, second_only = 0;
  for (const StoredPart& p : stored_->parts) {
    first_only += first(p.item) && !second(p.item);
    second_only += second(p.item) && !first(p.item);
  }
  EXPECT_GT(first_only, 0);
  EXPECT_GT(second_only, 0);
  expect_exact("dims=200..310x100..210x20..50|50..150x30..100x1..40",
               [&](const Item& p) { return first(p) || second(p); });
}

// One searcher keeps the rows of its recent filters: asked again, in any
// order and after more filters than it keeps, each filter returns what a
// fresh searcher returns, and filters that differ only in an open or closed
// bound or in the last digit keep their own rows.
TEST_F(FilteredSearchTest, FiltersAskedAgainAnswerAsTheFirstTime) {
  const Searcher kept = Searcher::open(*root_ / "flat");
  std::vector<std::string> filters = {"x<100", "x<=100", "x<100.000001", "x<100 faces>=30"};
  for (int bound = 20; bound <= 400; bound += 20) filters.push_back(format("x<{}", bound));
  for (int round = 0; round < 2; ++round) {
    for (const std::string& filter : filters) {
      SCOPED_TRACE(filter);
      SearchOptions options;
      options.filter = parse_filter(filter);
      const SearchResult again = kept.query_item("p00042", options);
      const SearchResult fresh = Searcher::open(*root_ / "flat").query_item("p00042", options);
      EXPECT_EQ(again.candidates, fresh.candidates);
      ASSERT_EQ(again.hits.size(), fresh.hits.size());
      for (size_t i = 0; i < again.hits.size(); ++i)
        EXPECT_EQ(again.hits[i].item->id, fresh.hits[i].item->id);
    }
  }
  int64_t below = 0, at_most = 0;
  for (const StoredPart& p : stored_->parts) {
    below += p.item.size_mm[0] < 100;
    at_most += p.item.size_mm[0] <= 100;
  }
  ASSERT_NE(below, at_most);  // the library has parts at exactly 100
  SearchOptions options;
  options.filter = parse_filter("x<100");
  EXPECT_EQ(kept.query_item("p00042", options).candidates, below);
  options.filter = parse_filter("x<=100");
  EXPECT_EQ(kept.query_item("p00042", options).candidates, at_most);
}

TEST_F(FilteredSearchTest, FacesHolesAndFileTypes) {
  expect_exact("faces>=50", [](const Item& p) { return p.faces >= 50; });
  expect_exact("holes=3", [](const Item& p) { return p.holes == 3; });
  expect_exact("holes>=5 holes!=7", [](const Item& p) { return p.holes >= 5 && p.holes != 7; });
  expect_exact("hole=7±0.5", [](const Item& p) { return any_hole(p, 6.5, 7.5); });
  expect_exact("hole=M8", [](const Item& p) { return any_hole(p, 6.4, 10); });
  expect_exact("type=iges", [](const Item& p) { return p.file_type == "iges"; });
  expect_exact("type=step,brep", [](const Item& p) { return p.file_type != "iges"; });
  expect_exact("type!=step", [](const Item& p) { return p.file_type != "step"; });
}

TEST_F(FilteredSearchTest, ImportedFields) {
  auto field = [](const Item& p, const char* name) {
    const std::string* v = p.field(name);
    return v ? *v : std::string();
  };
  expect_exact("material=steel", [&](const Item& p) { return field(p, "material") == "steel"; });
  expect_exact("material=*STEEL", [&](const Item& p) {
    const std::string m = field(p, "material");
    return m == "steel" || m == "stainless steel";
  });
  expect_exact("material~stain",
               [&](const Item& p) { return field(p, "material") == "stainless steel"; });
  expect_exact("part_number=PN-001*",
               [&](const Item& p) { return field(p, "part_number").starts_with("PN-001"); });
  // A part without the field is not equal to a value, and is unequal to any.
  expect_exact("project!=gemini", [&](const Item& p) { return field(p, "project") != "gemini"; });
  expect_exact("type=step holes>=2 size<200 material=brass", [&](const Item& p) {
    return p.file_type == "step" && p.holes >= 2 && p.sorted_size_mm()[0] < 200 &&
           field(p, "material") == "brass";
  });
}

// The filter keeps 30 parts of 3,000 (1%); the inverted file alone probes 2
// of 32 lists and would meet about 2 of them, yet the answer is the exact 20.
TEST_F(FilteredSearchTest, AOnePercentFilterStillFillsK) {
  int64_t apollo = 0;
  for (const StoredPart& p : stored_->parts)
    apollo += p.item.field("project") != nullptr && *p.item.field("project") == "apollo";
  ASSERT_GE(apollo, 20);
  ASSERT_LE(apollo, kParts / 100);
  expect_exact(
      "project=apollo",
      [](const Item& p) { return p.field("project") && *p.field("project") == "apollo"; }, 20);
  // Fewer parts pass than asked for: all of them come back.
  expect_exact(
      "project=apollo holes=0",
      [](const Item& p) {
        return p.field("project") && *p.field("project") == "apollo" && p.holes == 0;
      },
      20);
}

TEST_F(FilteredSearchTest, UnknownFieldsAreRefusedNamingTheKnownOnes) {
  const Searcher searcher = Searcher::open(*root_ / "flat");
  EXPECT_EQ(searcher.fields(), (std::vector<std::string>{"part_number", "material", "project"}));
  SearchOptions options;
  options.filter = parse_filter("materal=steel");
  try {
    searcher.query_item("p00001", options);
    FAIL() << "an unknown field was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part_number, material, project"), std::string::npos)
        << e.what();
  }
}

TEST_F(FilteredSearchTest, MinimumScoreSameSizeAndTheAppliedList) {
  const Searcher searcher = Searcher::open(*root_ / "flat");
  SearchOptions options;
  options.k = 50;
  options.filter = parse_filter("score>=0.8");
  SearchResult r = searcher.query_item("p00042", options);
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits.front().item->id, "p00042");
  for (const Hit& h : r.hits) EXPECT_GE(h.score, 0.8);
  // Exactly the parts of the unfiltered top 50 that score 0.8 or more.
  options.filter = {};
  const SearchResult all = searcher.query_item("p00042", options);
  const auto enough =
      std::count_if(all.hits.begin(), all.hits.end(), [](const Hit& h) { return h.score >= 0.8; });
  EXPECT_EQ(static_cast<int64_t>(r.hits.size()), enough);

  options.same_size = 0.1;
  r = searcher.query_item("p00042", options);
  const auto own = searcher.find("p00042")->sorted_size_mm();
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits.front().item->id, "p00042");
  for (const Hit& h : r.hits) {
    const auto s = h.item->sorted_size_mm();
    for (int i = 0; i < 3; ++i) {
      EXPECT_GE(s[i], own[i] * 0.9 - 1e-9) << h.item->id;
      EXPECT_LE(s[i], own[i] * 1.1 + 1e-9) << h.item->id;
    }
  }
  ASSERT_EQ(r.applied.conditions.size(), 1u);
  EXPECT_EQ(r.applied.conditions[0].origin, FilterOrigin::kSameSize);
  // Same size needs a part to compare with.
  EXPECT_THROW(searcher.query_text("a plate", options), Error);
}

// Facts a text states are counted by their own pass over the catalog (in
// vector registers where the machine has them); as hard conditions
// (--strict-numbers) the same facts select rows a part at a time. The two
// agree for every extent key: as many parts meet all the facts as pass.
TEST_F(FilteredSearchTest, StatedFactsMeetWhereStrictNumbersPass) {
  const Searcher searcher = Searcher::open(*root_ / "ivf");
  std::set<std::string> keys;
  int64_t meeting = 0;
  for (const char* text :
       {"a bar 150 mm long", "a plate 250 by 200 by 5 mm", "a bracket under 100 mm",
        "a block 120 mm long, 40 mm wide and 20 mm high",
        "0.75 units long, 0.47 wide and 0.03 thick", "a part at least 280 mm long"}) {
    SCOPED_TRACE(text);
    SearchOptions ranked;
    ranked.k = 10;
    const SearchResult facts = searcher.query_text(text, ranked);
    ASSERT_FALSE(facts.stated.empty());
    for (const Condition& c : facts.stated) keys.insert(c.to_string().substr(0, 4));
    SearchOptions strict = ranked;
    strict.strict_numbers = true;
    EXPECT_EQ(facts.meeting_all, searcher.query_text(text, strict).candidates);
    meeting += facts.meeting_all;
  }
  EXPECT_GT(meeting, 100);  // the facts keep parts, not none
  // Single extents, all three sorted extents, and proportions were read.
  EXPECT_TRUE(keys.count("exte") || keys.count("size")) << "no extent fact";
  EXPECT_TRUE(keys.count("dims")) << "no dims fact";
  EXPECT_TRUE(keys.count("prop")) << "no proportions fact";
}

TEST_F(FilteredSearchTest, StrictNumbersFilterATextQueryAndSaySo) {
  const Searcher searcher = Searcher::open(*root_ / "ivf");
  SearchOptions options;
  options.k = 10;
  options.strict_numbers = true;
  const SearchResult r = searcher.query_text("a bracket under 100 mm with six holes", options);
  ASSERT_EQ(r.applied.conditions.size(), 2u);
  EXPECT_EQ(r.applied.conditions[0].to_string(), "size<100");
  EXPECT_EQ(r.applied.conditions[0].because, "under 100 mm");
  EXPECT_EQ(r.applied.conditions[1].to_string(), "hole_count=6");
  EXPECT_EQ(r.hits.size(), 10u);
  for (const Hit& h : r.hits) {
    EXPECT_LT(h.item->sorted_size_mm()[0], 100);
    // Six holes in all, or six of one diameter among more.
    const auto& d = h.item->hole_diameters_mm;
    bool six_equal = h.item->holes == 6;
    for (const double v : d)
      six_equal = six_equal || std::count_if(d.begin(), d.end(), [&](double w) {
                                 return w >= v && w <= 1.01 * v + 0.01;
                               }) == 6;
    EXPECT_TRUE(six_equal) << h.item->id;
  }
  // Without the flag the same words filter nothing; they rank.
  options.strict_numbers = false;
  const SearchResult ranked = searcher.query_text("a bracket under 100 mm with six holes", options);
  EXPECT_TRUE(ranked.applied.empty());
  EXPECT_EQ(ranked.stated.size(), 2u);
}

// Mirror images of the query part are left out on request; the part itself,
// a moved copy and a different part of the same size stay.
TEST(MirroredSearch, IgnoreMirroredLeavesOutMirrorImagesOnly) {
  at::set_num_threads(1);
  const fs::path root = testing::fresh_folder("cadclip_mirrored_search_test");
  testing::write_checkpoint(root / "run", 0);
  StoredIndex library;
  library.checkpoint = (root / "run").string();
  library.checkpoint_identity = model::checkpoint_identity(root / "run");
  library.embed_dim = kDim;
  auto add = [&](const std::string& id, int handedness, double spread, float lean) {
    StoredPart p;
    p.item.id = p.item.name = id;
    p.item.size_mm[0] = 80;
    p.item.size_mm[1] = 40;
    p.item.size_mm[2] = 10;
    p.item.faces = 12;
    p.item.holes = 2;
    p.item.hole_diameters_mm = {6, 6};
    p.item.shape = {{spread, 11.0, 3.0}, {0.4, 0.3, 0.2}, handedness};
    p.embedding.assign(kDim, 0.f);
    p.embedding[0] = 1;
    p.embedding[1] = lean;
    float norm = std::sqrt(1 + lean * lean);
    for (float& v : p.embedding) v /= norm;
    library.parts.push_back(std::move(p));
  };
  add("left", 1, 25.0, 0.0f);
  add("right", -1, 25.0, 0.01f);     // its mirror image
  add("left_copy", 1, 25.0, 0.02f);  // a copy, same hand
  add("other", -1, 30.0, 0.03f);     // another shape, opposite hand
  write_stored_index(root / "index", library, {.factory = "Flat"});
  const Searcher searcher = Searcher::open(root / "index");
  SearchOptions options;
  options.k = 4;
  auto ids = [](const SearchResult& r) {
    std::vector<std::string> out;
    for (const Hit& h : r.hits) out.push_back(h.item->id);
    return out;
  };
  EXPECT_EQ(ids(searcher.query_item("left", options)),
            (std::vector<std::string>{"left", "right", "left_copy", "other"}));
  options.ignore_mirrored = true;
  const SearchResult r = searcher.query_item("left", options);
  EXPECT_EQ(ids(r), (std::vector<std::string>{"left", "left_copy", "other"}));
  EXPECT_EQ(r.mirrored_left_out, 1);
  fs::remove_all(root);
}

// Text queries of one batch (the server's encoder batches) are searched
// together: one search per distinct filter, scoring the passing rows
// directly when few pass, one FAISS call with a selector when many do.
// Either way each text gets what it gets searched alone.
TEST(BatchedFilteredSearch, TextsSearchedTogetherGetWhatEachGetsAlone) {
  at::set_num_threads(1);
  const fs::path root = testing::fresh_folder("cadclip_batched_filtered_test");
  std::vector<Item> items;
  for (int i = 0; i < 6000; ++i) items.push_back(part_item(i));  // past direct scoring's bound
  const StoredIndex library = testing::random_library(root / "run", std::move(items), 9, kDim);
  write_stored_index(root / "flat", library, {.factory = "Flat"});
  write_stored_index(root / "ivf", library,
                     {.factory = "IVF32,Flat", .search_params = "nprobe=32"});
  // holes>=1 passes 5,333 rows (a FAISS selector), material=steel 1,500 and
  // project=apollo 60 (scored directly); one filter comes three times.
  const std::vector<std::string> filters = {"",         "holes>=1",       "material=steel",
                                            "holes>=1", "project=apollo", "",
                                            "holes>=1", "material=steel"};
  std::vector<std::string> texts;
  std::vector<SearchOptions> options;
  for (size_t i = 0; i < filters.size(); ++i) {
    texts.push_back(testing::caption_texts()[i % testing::caption_texts().size()]);
    SearchOptions& o = options.emplace_back();
    o.k = i % 2 ? 10 : 3;
    o.filter = parse_filter(filters[i]);
    o.rank_by_facts = false;  // a vector query states no facts
  }
  options[6].filter.min_score = 0.2;
  for (const char* kind : {"flat", "ivf"}) {
    SCOPED_TRACE(kind);
    const Searcher searcher = Searcher::open(root / kind);
    const std::vector<SearchResult> together = searcher.query_texts(texts, options);
    ASSERT_EQ(together.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      SCOPED_TRACE(filters[i]);
      const SearchResult alone = searcher.query_vector(searcher.embed_text(texts[i]), options[i]);
      EXPECT_EQ(together[i].candidates, alone.candidates);
      EXPECT_EQ(together[i].applied.to_string(), alone.applied.to_string());
      ASSERT_EQ(together[i].hits.size(), alone.hits.size());
      for (size_t h = 0; h < alone.hits.size(); ++h) {
        EXPECT_EQ(together[i].hits[h].item->id, alone.hits[h].item->id) << "rank " << h + 1;
        EXPECT_NEAR(together[i].hits[h].score, alone.hits[h].score, 1e-5);
        EXPECT_EQ(together[i].hits[h].rank, static_cast<int64_t>(h) + 1);
      }
    }
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace cadclip::index
