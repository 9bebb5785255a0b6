// evaluate() end to end on a tiny dataset written with the shard writer, a
// tiny model from build_model (small B-Rep encoder, the tiny BERT of tests/fixtures/text/bert):
// metrics equal a direct computation, collapse is flagged and ranks last, equal geometry hashes
// count as hits, the JSON has every field, embeddings round-trip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "../model/random_graph.h"
#include "../model/tiny_model.h"
#include "cadclip/core/error.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/shard.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/model/model_config.h"
#include "cadclip/model/two_tower.h"
#include "cadclip/text/quantities.h"
#include "cadclip/text/text_model.h"

namespace cadclip::eval {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxLength = 12;

struct Fixture {
  fs::path folder;
  data::Dataset dataset;
  std::vector<data::BRepGraph> graphs;
  std::vector<data::Caption> captions;
  std::vector<std::string> split;
  model::BuiltModel built;
  model::TwoTower model{nullptr};  // built.model
  text::TextModel text;            // built.text
};

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = {
      "A flange with six bolt holes, 120 mm outer diameter.",
      "Ø12 mm shaft, 80 mm long, with a 2 mm keyway.",
      "M6×1.0 hex nut, 10 mm across flats.",
      "Washer: inner Ø6.4, outer Ø12, thickness 1.6 mm.",
      "Rectangular plate 100x50x5 mm with four M4 holes",
      "L-bracket, 3 mm sheet, bend radius R2, 90° bend.",
      "Spur gear: module 1.5, 24 teeth, 20° pressure angle, bore Ø8 H7.",
      "Cylinder Ø30×40",
      "Cube 10 x 10 x 10.",
      "A block with a pocket (20 mm × 15 mm × 5 mm) and two slots.",
      "Chamfer 0.5×45°, fillet r=1.25.",
      "Thread M8x1.25-6g, length 25.",
      "Hexagonal prism, 17 mm AF, 8 mm thick!",
      "Pipe, 2\" schedule 40, length 300 mm.",
  };
  return texts;
}

// Six parts p0..p5 of different sizes; `twin` makes p5 a copy of p4's
// geometry, with p4's hash when `same_hash`. Captions at two levels (p0 and
// p1 share their abstract caption word for word); "other" is not in the split.
Fixture make_fixture(const std::string& name, bool twin = false, bool same_hash = true) {
  Fixture f;
  f.folder =
      fs::temp_directory_path() / ("cadclip_eval_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(f.folder);
  fs::create_directories(f.folder);
  data::ShardWriter writer;
  const int faces[] = {3, 5, 4, 6, 2, 7, 4};
  for (int i = 0; i < 7; ++i) {
    data::BRepGraph g = testing::random_graph(faces[i], 100 + i);
    if (twin && i == 5) g = f.graphs[4];
    g.id = i < 6 ? "p" + std::to_string(i) : "other";
    g.geometry_hash = "hash" + std::to_string(i);
    if (twin && i == 5 && same_hash) g.geometry_hash = f.graphs[4].geometry_hash;
    writer.add(g);
    f.graphs.push_back(g);
  }
  writer.write(f.folder / "shard.safetensors");
  f.dataset = data::Dataset::open_shards({f.folder / "shard.safetensors"});

  const auto& c = corpus();
  f.captions = {{"p0", "abstract", c[0]}, {"p1", "abstract", c[0]},    {"p2", "abstract", c[1]},
                {"p3", "abstract", c[2]}, {"p4", "abstract", c[3]},    {"p5", "abstract", c[4]},
                {"p0", "expert", c[5]},   {"p1", "expert", c[6]},      {"p2", "expert", c[7]},
                {"p3", "expert", c[8]},   {"p4", "expert", c[9]},      {"p5", "expert", c[10]},
                {"p2", "expert", c[11]},  {"other", "abstract", c[12]}};
  // p3 twice and an id the dataset lacks: counted once, and as missing.
  f.split = {"p0", "p1", "p2", "p3", "p3", "p4", "p5", "lost"};

  // The product's model builder with a tiny B-Rep tower and the tiny BERT.
  torch::manual_seed(0);
  const model::ModelConfig config = testing::tiny_model_config(kMaxLength);
  f.built = model::build_model(config);
  f.model = f.built.model;
  f.text = f.built.text;
  return f;
}

// Batches of 4 by default: several batches of both towers.
// `max_length` 0: the model's.
EvalReport run(Fixture& f, EvalOptions options = {}, int64_t batch_size = 4,
               int64_t max_length = 0) {
  options.batch_size = batch_size;
  return evaluate(*f.model, *f.text.tokenizer, max_length > 0 ? max_length : f.text.max_length,
                  f.dataset, f.captions, f.split, options);
}

// Pessimistic rank by its definition, counted by hand.
int64_t rank_of(const at::Tensor& row, const std::set<int64_t>& positives) {
  float best = -INFINITY;
  for (int64_t g : positives) best = std::max(best, row[g].item<float>());
  int64_t rank = 1;
  for (int64_t g = 0; g < row.size(0); ++g) {
    rank += !positives.count(g) && row[g].item<float>() >= best;
  }
  return rank;
}

double mean_rank(const at::Tensor& similarity, const std::vector<std::set<int64_t>>& positives) {
  double sum = 0;
  for (size_t q = 0; q < positives.size(); ++q) sum += rank_of(similarity[q], positives[q]);
  return sum / static_cast<double>(positives.size());
}

double r1(const at::Tensor& similarity, const std::vector<std::set<int64_t>>& positives) {
  double hits = 0;
  for (size_t q = 0; q < positives.size(); ++q) hits += rank_of(similarity[q], positives[q]) == 1;
  return hits / static_cast<double>(positives.size());
}

TEST(Evaluate, MatchesADirectComputation) {
  Fixture f = make_fixture("direct");
  f.model->train();
  const EvalReport report = run(f);
  EXPECT_TRUE(f.model->is_training()) << "evaluate must give the model back its training mode";

  EXPECT_EQ(report.split, "test");
  EXPECT_EQ(report.gallery, 6);
  EXPECT_EQ(report.distinct_geometry, 6);
  EXPECT_EQ(report.missing, 1);
  EXPECT_EQ(report.uncaptioned, 0);
  EXPECT_EQ(report.max_text_length, kMaxLength);
  ASSERT_EQ(report.levels.size(), 2u);
  EXPECT_EQ(report.levels[0].level, "abstract");
  EXPECT_EQ(report.levels[1].level, "expert");
  EXPECT_EQ(report.embeddings.gallery_ids,
            (std::vector<std::string>{"p0", "p1", "p2", "p3", "p4", "p5"}));

  // The towers run directly on everything at once.
  f.model->eval();
  torch::NoGradGuard no_grad;
  std::vector<data::BRepGraph> gallery(f.graphs.begin(), f.graphs.begin() + 6);
  const at::Tensor brep = f.model->encode_brep(data::collate(gallery));
  EXPECT_TRUE(at::allclose(report.embeddings.brep, brep, 1e-5, 1e-5));

  for (size_t l = 0; l < 2; ++l) {
    const std::string level = l == 0 ? "abstract" : "expert";
    std::vector<std::string> texts;
    std::vector<int64_t> part;
    int64_t truncated = 0;
    for (const data::Caption& c : f.captions) {
      if (c.level != level || c.id == "other") continue;
      texts.push_back(c.text);
      part.push_back(c.id[1] - '0');
      truncated += static_cast<int64_t>(f.text.tokenizer->encode(c.text).size()) > kMaxLength;
    }
    const auto [ids, mask] = text::to_tensors(f.text.tokenizer->batch(texts, kMaxLength));
    const at::Tensor text = f.model->encode_text(ids, mask, text::quantity_batch(texts));

    std::vector<std::set<int64_t>> to_cad;
    for (int64_t p : part) to_cad.push_back({p});
    const at::Tensor t2c = at::matmul(text, brep.t());
    const LevelReport& got = report.levels[l];
    EXPECT_EQ(got.text_to_cad.queries, static_cast<int64_t>(texts.size()));
    EXPECT_EQ(got.text_to_cad.gallery, 6);
    EXPECT_NEAR(got.text_to_cad.r1, r1(t2c, to_cad), 1e-12) << level;
    EXPECT_NEAR(got.text_to_cad.mean_rank, mean_rank(t2c, to_cad), 1e-12) << level;
    EXPECT_NEAR(got.text_to_cad.chance_r1, 1.0 / 6, 1e-12);
    EXPECT_EQ(got.truncated, truncated) << level;

    // CAD->text: each part against the level's captions.
    std::vector<std::set<int64_t>> to_text(6);
    for (size_t j = 0; j < part.size(); ++j) to_text[part[j]].insert(static_cast<int64_t>(j));
    const at::Tensor c2t = at::matmul(brep, text.t());
    EXPECT_EQ(got.cad_to_text.queries, 6);
    EXPECT_EQ(got.cad_to_text.gallery, static_cast<int64_t>(texts.size()));
    EXPECT_NEAR(got.cad_to_text.r1, r1(c2t, to_text), 1e-12) << level;
    EXPECT_NEAR(got.cad_to_text.mean_rank, mean_rank(c2t, to_text), 1e-12) << level;
  }
  // The long expert captions exceed 12 tokens; at least one is cut.
  EXPECT_GT(report.levels[1].truncated, 0);
  // p0 and p1 share their abstract caption: two shared queries, one of which
  // can never be first.
  EXPECT_EQ(report.levels[0].ceiling.shared_queries, 2);
  EXPECT_NEAR(report.levels[0].ceiling.r1_ceiling, 5.0 / 6, 1e-12);
  EXPECT_EQ(report.levels[1].ceiling.shared_queries, 0);
  EXPECT_EQ(report.levels[1].ceiling.r1_ceiling, 1.0);

  // Distinct random parts find themselves first. (An untrained model's rows
  // do point one way, mean cosine ~0.95, so no verdict on collapse here.)
  EXPECT_TRUE(report.cad_to_cad_ok);
  EXPECT_EQ(report.cad_to_cad.r1, 1.0);
  EXPECT_NEAR(report.brep.mean_norm, 1.0, 1e-5);
  EXPECT_EQ(report.brep.nan_count, 0);
  EXPECT_EQ(report.brep.count, 6);
  EXPECT_EQ(report.text.count, 12);  // distinct texts: 13 captions, one shared
  const std::string table = format_table(report);
  for (const char* row : {"text->CAD", "CAD->text", "CAD->CAD", "abstract ", "expert ", "self "}) {
    EXPECT_NE(table.find(row), std::string::npos) << row << " missing from\n" << table;
  }
  EXPECT_EQ(table.find("FAILED"), std::string::npos) << table;
  if (std::getenv("CADCLIP_PRINT_TABLE")) std::printf("%s", table.c_str());
  EXPECT_NEAR(mean_text_to_cad_r1(report),
              (report.levels[0].text_to_cad.r1 + report.levels[1].text_to_cad.r1) / 2, 1e-12);
  fs::remove_all(f.folder);
}

TEST(Evaluate, ReportsOnlyTheLevelsAskedFor) {
  Fixture f = make_fixture("levels");
  EvalOptions options;
  options.levels = {"expert"};
  options.split = "validation";
  const EvalReport report = run(f, options, 4, /*max_length=*/64);  // not the model's 12
  ASSERT_EQ(report.levels.size(), 1u);
  EXPECT_EQ(report.levels[0].level, "expert");
  EXPECT_EQ(report.levels[0].truncated, 0);
  EXPECT_EQ(report.max_text_length, 64);
  EXPECT_EQ(report.split, "validation");
  EXPECT_EQ(report.embeddings.query_ids.size(), 7u);

  options.levels = {"beginner"};
  try {
    run(f, options);
    FAIL() << "a level without captions must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'beginner'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("abstract, expert"), std::string::npos) << e.what();
  }
  f.split = {"nowhere"};
  EXPECT_THROW(run(f), Error);
  fs::remove_all(f.folder);
}

TEST(Evaluate, FlagsCollapsedEmbeddingsAndRanksThemLast) {
  Fixture f = make_fixture("collapse");
  {
    torch::NoGradGuard no_grad;
    f.model->brep_head->weight.zero_();
    f.model->text_head->weight.zero_();
  }
  const EvalReport report = run(f);
  EXPECT_TRUE(report.brep.collapsed);
  EXPECT_TRUE(report.text.collapsed);
  EXPECT_NE(report.brep.reason.find("norm ~0"), std::string::npos) << report.brep.reason;
  EXPECT_FALSE(report.cad_to_cad_ok);
  EXPECT_EQ(report.cad_to_cad.r1, 0);
  for (const LevelReport& level : report.levels) {
    // Every score ties: each query ranks behind every wrong part.
    EXPECT_EQ(level.text_to_cad.r1, 0) << level.level;
    EXPECT_LE(level.text_to_cad.r1, level.text_to_cad.chance_r1);
    EXPECT_EQ(level.text_to_cad.median_rank, 6) << level.level;
    EXPECT_EQ(level.cad_to_text.r1, 0) << level.level;
  }
  const std::string table = format_table(report);
  EXPECT_NE(table.find("FAILED"), std::string::npos) << table;
  EXPECT_NE(table.find("WARNING"), std::string::npos) << table;
  EXPECT_NE(table.find("COLLAPSED"), std::string::npos) << table;
  fs::remove_all(f.folder);
}

TEST(Evaluate, PartsWithEqualGeometryHashesCountAsHits) {
  // p5 is p4's geometry: equal embeddings (bitwise, as each model runs in a
  // batch of its own). With equal hashes either is a hit; with different
  // hashes each ties with its twin and ranks one lower.
  Fixture same = make_fixture("same_hash", /*twin=*/true, /*same_hash=*/true);
  Fixture different = make_fixture("different_hash", /*twin=*/true, /*same_hash=*/false);
  const EvalReport a = run(same, {}, /*batch_size=*/1);
  const EvalReport b = run(different, {}, /*batch_size=*/1);
  EXPECT_EQ(a.distinct_geometry, 5);
  EXPECT_EQ(b.distinct_geometry, 6);
  EXPECT_TRUE(at::equal(a.embeddings.brep[4], a.embeddings.brep[5]));

  EXPECT_TRUE(a.cad_to_cad_ok);
  EXPECT_EQ(a.cad_to_cad.r1, 1.0);
  EXPECT_FALSE(b.cad_to_cad_ok);
  EXPECT_NEAR(b.cad_to_cad.r1, 4.0 / 6, 1e-12);

  for (size_t l = 0; l < 2; ++l) {
    // Queries of p4 and p5 (one caption each at both levels): their rank
    // grows by exactly one without the shared hash; the rest stay.
    const RetrievalMetrics& x = a.levels[l].text_to_cad;
    const RetrievalMetrics& y = b.levels[l].text_to_cad;
    EXPECT_NEAR(y.mean_rank - x.mean_rank, 2.0 / static_cast<double>(x.queries), 1e-12);
    EXPECT_GT(x.chance_r1, y.chance_r1);
    // CAD->text: p4 and p5 each have the other's caption as a hit too.
    const RetrievalMetrics& u = a.levels[l].cad_to_text;
    const RetrievalMetrics& v = b.levels[l].cad_to_text;
    EXPECT_LE(u.mean_rank, v.mean_rank);
  }
  fs::remove_all(same.folder);
  fs::remove_all(different.folder);
}

TEST(Evaluate, JsonHasEveryField) {
  Fixture f = make_fixture("json");
  const nlohmann::json j = to_json(run(f));
  const auto keys = [](const nlohmann::json& object) {
    std::set<std::string> out;
    for (const auto& [key, value] : object.items()) out.insert(key);
    return out;
  };
  const std::set<std::string> metrics = {"queries", "gallery",     "r1",        "r5",       "r10",
                                         "mrr",     "median_rank", "mean_rank", "chance_r1"};
  EXPECT_EQ(keys(j), (std::set<std::string>{"split", "gallery", "distinct_geometry", "missing",
                                            "uncaptioned", "max_text_length", "levels",
                                            "mean_text_to_cad_r1", "cad_to_cad", "cad_to_cad_ok",
                                            "embeddings", "seconds"}));
  EXPECT_EQ(keys(j["cad_to_cad"]), metrics);
  ASSERT_EQ(j["levels"].size(), 2u);
  for (const auto& level : j["levels"]) {
    EXPECT_EQ(keys(level), (std::set<std::string>{"level", "text_to_cad", "cad_to_text", "ceiling",
                                                  "truncated"}));
    EXPECT_EQ(keys(level["text_to_cad"]), metrics);
    EXPECT_EQ(keys(level["cad_to_text"]), metrics);
    EXPECT_EQ(keys(level["ceiling"]),
              (std::set<std::string>{"queries", "shared_queries", "shared_share", "r1_ceiling"}));
  }
  EXPECT_EQ(j["levels"][0]["ceiling"]["shared_queries"], 2);
  EXPECT_EQ(keys(j["embeddings"]), (std::set<std::string>{"brep", "text"}));
  for (const char* tower : {"brep", "text"}) {
    EXPECT_EQ(
        keys(j["embeddings"][tower]),
        (std::set<std::string>{"count", "dim", "nan_count", "inf_count", "finite_rows", "mean_norm",
                               "mean_dim_std", "mean_pairwise_cosine", "collapsed", "reason"}));
  }
  EXPECT_EQ(j["gallery"], 6);
  EXPECT_EQ(j["split"], "test");
  fs::remove_all(f.folder);
}

TEST(Evaluate, APooledTextCacheGivesTheSameReportAndHoldsEveryText) {
  Fixture f = make_fixture("pooled_cache");
  const EvalReport plain = run(f);
  PooledTextCache cache;
  EvalOptions options;
  options.pooled_text_cache = &cache;
  const EvalReport first = run(f, options);
  // Every distinct caption text of the split is pooled once, a vector each.
  std::set<std::string> texts;
  for (const data::Caption& c : f.captions)
    if (c.id != "other") texts.insert(c.text);
  EXPECT_EQ(cache.pooled.size(), texts.size());
  for (const auto& [text, pooled] : cache.pooled) EXPECT_EQ(pooled.dim(), 1) << text;
  // A second call takes every chunk from the cache: the same embeddings to
  // the bit, and so the same report, as without a cache.
  const EvalReport second = run(f, options);
  EXPECT_TRUE(at::equal(plain.embeddings.text, first.embeddings.text));
  EXPECT_TRUE(at::equal(plain.embeddings.text, second.embeddings.text));
  nlohmann::json a = to_json(plain), b = to_json(second);
  a.erase("seconds");
  b.erase("seconds");
  EXPECT_EQ(a, b);
  // The cache is what the second call used: features changed in it change the result.
  for (auto& [text, pooled] : cache.pooled) pooled = at::zeros_like(pooled);
  const EvalReport zeroed = run(f, options);
  EXPECT_FALSE(at::equal(plain.embeddings.text, zeroed.embeddings.text));
}

TEST(Evaluate, EmbeddingsRoundTripThroughSafetensors) {
  Fixture f = make_fixture("save");
  const EvalReport report = run(f);
  const fs::path path = f.folder / "embeddings.safetensors";
  save_embeddings(path, report.embeddings);
  const SafetensorsReader file = SafetensorsReader::open(path);
  const auto tensor = [&](const char* name) {
    const TensorInfo& info = file.at(name);
    EXPECT_EQ(info.dtype, DType::kF32);
    const std::vector<float> values = file.to_f32(info);
    return at::tensor(values, at::kFloat).view(info.shape);
  };
  EXPECT_TRUE(at::equal(tensor("brep"), report.embeddings.brep));
  EXPECT_TRUE(at::equal(tensor("text"), report.embeddings.text));
  const auto& meta = file.metadata();
  EXPECT_EQ(meta.at("format"), "cadclip.embeddings");
  EXPECT_EQ(meta.at("schema_version"), "1");
  EXPECT_EQ(nlohmann::json::parse(meta.at("brep_ids")).get<std::vector<std::string>>(),
            report.embeddings.gallery_ids);
  EXPECT_EQ(nlohmann::json::parse(meta.at("brep_hashes")).get<std::vector<std::string>>(),
            report.embeddings.gallery_hashes);
  EXPECT_EQ(nlohmann::json::parse(meta.at("text_ids")).get<std::vector<std::string>>(),
            report.embeddings.query_ids);
  EXPECT_EQ(nlohmann::json::parse(meta.at("text_levels")).get<std::vector<std::string>>(),
            report.embeddings.query_levels);
  EXPECT_EQ(report.embeddings.query_ids.size(), 13u);

  EvalEmbeddings broken = report.embeddings;
  broken.gallery_ids.pop_back();
  EXPECT_THROW(save_embeddings(f.folder / "broken.safetensors", broken), Error);
  fs::remove_all(f.folder);
}

}  // namespace
}  // namespace cadclip::eval
