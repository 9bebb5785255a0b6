// The index layer: exact search ranks equal those of eval::evaluate on the
// same checkpoint and gallery; an index refuses another checkpoint; updates
// embed only what changed; CAD folders are ingested in worker processes and
// failures are listed; a worker crashing or hanging while drawing a thumbnail
// costs only that drawing.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/data/dataset.h"
#include "cadclip/data/ingest_failure.h"
#include "cadclip/eval/evaluate.h"
#include "cadclip/index/build_index.h"
#include "cadclip/index/filter.h"
#include "cadclip/index/searcher.h"
#include "cadclip/index/stored_index.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/text/matmul_precision.h"
#include "index_fixture.h"

#include <array>
#include <cstdio>

#ifdef CADCLIP_WITH_OCCT
#include "../shared_corpus.h"
#include "cadclip/cad/prepare.h"
#endif

namespace cadclip::index {
namespace {

namespace fs = std::filesystem;
using testing::fresh_folder;

class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(1);
    root_ = fresh_folder("cadclip_index_test");
    testing::write_checkpoint(root_ / "run", 0);
    testing::write_prepared(root_ / "prepared", 8);
  }
  void TearDown() override { fs::remove_all(root_); }

  IndexOptions options(const fs::path& library, const fs::path& out) const {
    IndexOptions o;
    o.checkpoint = (root_ / "run").string();
    o.library = library.string();
    o.out = out.string();
    o.worker_binary = CADCLIP_BINARY;
    o.workers = 1;
    return o;
  }

  // `cadclip eval` of the checkpoint `run` on every part of the prepared folder.
  eval::EvalReport evaluate_prepared(const fs::path& run, const data::CaptionFile& captions) const {
    model::BuiltModel built = model::load_model_from_checkpoint(run);
    const data::Dataset dataset = data::Dataset::open(root_ / "prepared");
    return eval::evaluate(*built.model, *built.text.tokenizer, built.text.max_length, dataset,
                          captions.captions, dataset.ids(), {});
  }

  fs::path root_;
};

TEST_F(IndexTest, ExactSearchRanksEqualEval) {
  const IndexSummary summary = build_index(options(root_ / "prepared", root_ / "index"));
  EXPECT_EQ(summary.parts, 8);
  EXPECT_EQ(summary.added, 8);
  EXPECT_EQ(summary.factory, "Flat");

  // float32 query encoding, as eval's; the default may be bfloat16 (below).
  const Searcher searcher = Searcher::open(root_ / "index", {.text_matmul = "fp32"});
  ASSERT_EQ(searcher.size(), 8);
  EXPECT_EQ(searcher.find("m3")->caption, testing::caption_texts()[3]);

  const data::CaptionFile captions = data::read_captions(root_ / "prepared" / "captions.jsonl", {});
  const eval::EvalReport report = evaluate_prepared(root_ / "run", captions);
  const eval::EvalEmbeddings& e = report.embeddings;
  ASSERT_EQ(e.text.size(0), 8);
  const at::Tensor scores = e.text.matmul(e.brep.t());  // [Q, G]
  for (int64_t q = 0; q < e.text.size(0); ++q) {
    const std::string& text = captions.captions[q].text;
    EXPECT_TRUE(at::allclose(searcher.embed_text(text), e.text[q], 1e-5, 1e-5)) << text;
    const at::Tensor order = std::get<1>(scores[q].sort(/*dim=*/0, /*descending=*/true));
    const std::vector<Hit> hits = searcher.search_text(text, 8);
    ASSERT_EQ(hits.size(), 8u);
    for (int64_t r = 0; r < 8; ++r) {
      EXPECT_EQ(hits[r].item->id, e.gallery_ids[order[r].item<int64_t>()])
          << "query '" << text << "' rank " << r + 1;
      EXPECT_NEAR(hits[r].score, scores[q][order[r]].item<float>(), 1e-5);
    }
    // The rank of the described part is the same as eval's.
    const auto found = std::find_if(hits.begin(), hits.end(),
                                    [&](const Hit& h) { return h.item->id == e.query_ids[q]; });
    ASSERT_NE(found, hits.end());
    const float own =
        scores[q][std::find(e.gallery_ids.begin(), e.gallery_ids.end(), e.query_ids[q]) -
                  e.gallery_ids.begin()]
            .item<float>();
    EXPECT_EQ(found->rank, 1 + (scores[q] > own).sum().item<int64_t>());
  }
  // The default (auto) runs bfloat16 matmuls where the CPU has them: the
  // same directions up to bfloat16 rounding; a precision it cannot have is
  // refused by name.
  const Searcher fast = Searcher::open(root_ / "index");
  EXPECT_EQ(fast.text_matmul(), text::cpu_has_fast_bf16() ? "bf16" : "fp32");
  for (const data::Caption& caption : captions.captions)
    EXPECT_GT(
        at::dot(fast.embed_text(caption.text), searcher.embed_text(caption.text)).item<double>(),
        0.999)
        << caption.text;
  try {
    (void)Searcher::open(root_ / "index", {.text_matmul = "fp16"});
    ADD_FAILURE() << "text_matmul fp16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
  }
  // A part is its own best match.
  EXPECT_EQ(searcher.search_like_item("m5", 3).front().item->id, "m5");
  EXPECT_EQ(searcher.search_text("gear", 1000).size(), 8u);  // k clipped to the index
  EXPECT_THROW(searcher.search_text("gear", 0), Error);
  EXPECT_THROW(searcher.search_like_item("nope", 3), Error);
}

// A model with a size block (model/size_head.h): the index holds each part's
// embedding and block, a text query with numbers ranks as eval scores it
// (cosine + w * size match), and a part query compares shapes alone.
TEST_F(IndexTest, ASizeBlockModelRanksTextsAsEvalAndPartsByShape) {
  torch::manual_seed(0);
  model::BuiltModel sized = model::build_model(cadclip::testing::tiny_model_config());
  sized.model->add_size_head(25, 0.5);
  sized.config.two_tower.size_bins_per_decade = 25;
  sized.config.two_tower.size_weight = 0.5;
  model::save_checkpoint(root_ / "sized", "last", sized, {});
  IndexOptions o = options(root_ / "prepared", root_ / "index");
  o.checkpoint = (root_ / "sized").string();
  build_index(o);
  const Searcher searcher = Searcher::open(root_ / "index", {.text_matmul = "fp32"});
  const int64_t d = sized.model->options().embed_dim;
  ASSERT_EQ(searcher.dim(), sized.model->search_dim());
  ASSERT_GT(searcher.dim(), d);

  const data::CaptionFile captions = data::read_captions(root_ / "prepared" / "captions.jsonl", {});
  const eval::EvalReport report = evaluate_prepared(root_ / "sized", captions);
  const eval::EvalEmbeddings& e = report.embeddings;
  EXPECT_EQ(report.cad_to_cad.r1, 1.0);
  const at::Tensor scores = e.text.matmul(e.brep.t());
  int64_t with_block = 0;
  for (int64_t q = 0; q < e.text.size(0); ++q) {
    const std::string& text = captions.captions[q].text;
    with_block += e.text[q].narrow(0, d, searcher.dim() - d).abs().sum().item<float>() > 0;
    const std::vector<Hit> hits = searcher.search_text(text, 8);
    const at::Tensor order = std::get<1>(scores[q].sort(/*dim=*/0, /*descending=*/true));
    for (int64_t r = 0; r < 8; ++r) {
      EXPECT_EQ(hits[r].item->id, e.gallery_ids[order[r].item<int64_t>()]) << text << " " << r;
      EXPECT_NEAR(hits[r].score, scores[q][order[r]].item<float>(), 1e-5);
    }
  }
  EXPECT_GE(with_block, 4) << "captions that state a size have a size block";
  // A part as a query: its unit embedding against the parts' (cosine alone).
  const at::Tensor units = e.brep.narrow(1, 0, d);
  const int64_t m5 =
      std::find(e.gallery_ids.begin(), e.gallery_ids.end(), "m5") - e.gallery_ids.begin();
  const std::vector<Hit> like = searcher.search_like_item("m5", 3);
  EXPECT_EQ(like.front().item->id, "m5");
  EXPECT_NEAR(like.front().score, 1.0, 1e-5);
  for (const Hit& h : like) {
    const int64_t g =
        std::find(e.gallery_ids.begin(), e.gallery_ids.end(), h.item->id) - e.gallery_ids.begin();
    EXPECT_NEAR(h.score, at::dot(units[m5], units[g]).item<float>(), 1e-5) << h.item->id;
  }
}

// `cadclip search` as a person reads it: per result the name, the size in
// millimetres, the face count and the caption; --json the same for scripts.
TEST_F(IndexTest, SearchCommandShowsSizeFacesAndCaption) {
  build_index(options(root_ / "prepared", root_ / "index"));
  const Searcher searcher = Searcher::open(root_ / "index");
  const Item& m2 = *searcher.find("m2");
  auto run = [&](const std::string& args) {
    const std::string command = std::string(CADCLIP_BINARY) + " --log-level warn search " +
                                (root_ / "index").string() + " " + args + " 2>&1";
    std::string output;
    std::FILE* pipe = ::popen(command.c_str(), "r");
    std::array<char, 4096> buffer{};
    for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
      output.append(buffer.data(), n);
    EXPECT_EQ(::pclose(pipe), 0) << output;
    return output;
  };
  const std::string table = run("--like-id m2 -k 3");
  EXPECT_NE(table.find("size (mm)"), std::string::npos) << table;
  // The part itself comes first, with its size, faces and caption ("M6 hex nut").
  char size[64];
  std::snprintf(size, sizeof size, "%.1f x %.1f x %.1f", m2.size_mm[0], m2.size_mm[1],
                m2.size_mm[2]);
  EXPECT_NE(std::string(size), "0.0 x 0.0 x 0.0");  // a real size, not a default
  const std::string first = table.substr(table.find("\n   1 "));
  EXPECT_NE(first.find(size), std::string::npos) << table;
  char counts[32];
  std::snprintf(counts, sizeof counts, " %5lld %5lld  \"M6 hex nut\"",
                static_cast<long long>(m2.faces), static_cast<long long>(m2.holes));
  EXPECT_GE(m2.holes, 0);  // counted
  EXPECT_NE(first.find(counts), std::string::npos) << table;

  const nlohmann::json json = nlohmann::json::parse(run("--like-id m2 -k 3 --json"));
  const nlohmann::json& top = json.at("results").at(0);
  EXPECT_EQ(top.at("id"), "m2");
  EXPECT_EQ(top.at("faces"), m2.faces);
  EXPECT_DOUBLE_EQ(top.at("size_mm").at(0).get<double>(), m2.size_mm[0]);
  EXPECT_EQ(top.at("caption"), "M6 hex nut");
  EXPECT_EQ(json.at("results").size(), 3u);
}

TEST_F(IndexTest, RefusesAnotherCheckpoint) {
  build_index(options(root_ / "prepared", root_ / "index"));
  testing::write_checkpoint(root_ / "other", 1);
  SearcherOptions other;
  other.checkpoint = (root_ / "other").string();
  try {
    Searcher::open(root_ / "index", other);
    FAIL() << "another checkpoint was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("other weights"), std::string::npos) << e.what();
  }
  IndexOptions again = options(root_ / "prepared", root_ / "index");
  again.checkpoint = other.checkpoint;
  EXPECT_THROW(build_index(again), Error);
  again.overwrite = true;
  EXPECT_EQ(build_index(again).added, 8);
  EXPECT_NO_THROW(Searcher::open(root_ / "index", other));
  EXPECT_THROW(Searcher::open(root_ / "prepared"), Error);  // no index at all
}

// An index carries the model it was built with: built from one working
// folder with relative paths, moved to another folder, its checkpoint
// deleted, and searched from a third folder, it gives the same answers and
// names the same model; versions of one model share one copy of it.
TEST_F(IndexTest, AMovedIndexOpensFromAnyFolderWithTheSameAnswers) {
  // The working folder is the process's: put back whatever happens.
  struct WorkingFolder {
    fs::path was = fs::current_path();
    ~WorkingFolder() { fs::current_path(was); }
  } restore;
  fs::create_directories(root_ / "third");
  fs::current_path(root_);
  IndexOptions relative = options("prepared", "built/index");
  relative.checkpoint = "run/checkpoints/last.json";
  build_index(relative);
  const std::string identity = model::checkpoint_identity(root_ / "run");
  std::map<std::string, std::vector<std::pair<std::string, float>>> before;
  auto answers = [](const Searcher& searcher) {
    std::map<std::string, std::vector<std::pair<std::string, float>>> out;
    for (const std::string& text : testing::caption_texts())
      for (const Hit& h : searcher.search_text(text, 8))
        out[text].emplace_back(h.item->id, static_cast<float>(h.score));
    for (const Hit& h : searcher.search_like_item("m3", 8))
      out["like m3"].emplace_back(h.item->id, static_cast<float>(h.score));
    return out;
  };
  {
    const Searcher searcher = Searcher::open("built/index");
    before = answers(searcher);
    EXPECT_EQ(searcher.model().sha256, identity);
  }
  fs::create_directories(root_ / "elsewhere");
  fs::rename(root_ / "built" / "index", root_ / "elsewhere" / "moved");
  fs::remove_all(root_ / "run");  // the checkpoint is gone: only the index's copy is left
  fs::current_path(root_ / "third");
  const fs::path moved = root_ / "elsewhere" / "moved";
  {
    const Searcher searcher = Searcher::open(moved);
    EXPECT_EQ(answers(searcher), before);
    const ModelInfo& m = searcher.model();
    EXPECT_EQ(m.sha256, identity);
    EXPECT_EQ(m.name, "last-step0");  // the checkpoint folder save_checkpoint wrote
    EXPECT_EQ(m.folder, moved / "models" / identity);
  }
  // The command line, from the third folder, says which model answered.
  const std::string command = std::string(CADCLIP_BINARY) + " --log-level warn search " +
                              moved.string() + " 'M6 hex nut' -k 8 2>&1";
  std::string table;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    table.append(buffer.data(), n);
  EXPECT_EQ(::pclose(pipe), 0) << table;
  EXPECT_NE(table.find("model last-step0 (sha256 " + identity.substr(0, 16) + ")"),
            std::string::npos)
      << table;
  // A second version of the same model shares the copy; a rebuild with other
  // weights replaces it once no version uses it.
  fs::current_path(restore.was);  // the tiny model names its text folder by a relative path
  IndexOptions again = options(root_ / "prepared", moved);
  testing::write_checkpoint(root_ / "run", 0);
  EXPECT_EQ(build_index(again).unchanged, 8);
  const auto models = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(moved / "models"))
      names.push_back(entry.path().filename().string());
    return names;
  };
  EXPECT_EQ(models(), std::vector<std::string>{identity});
  testing::write_checkpoint(root_ / "other", 1);
  again.checkpoint = (root_ / "other").string();
  again.overwrite = true;
  build_index(again);
  EXPECT_EQ(models(), std::vector<std::string>{model::checkpoint_identity(root_ / "other")});
}

TEST_F(IndexTest, UpdateEmbedsOnlyChangesOfAPreparedLibrary) {
  build_index(options(root_ / "prepared", root_ / "index"));
  IndexSummary s = build_index(options(root_ / "prepared", root_ / "index"));
  EXPECT_EQ(s.unchanged, 8);
  EXPECT_EQ(s.added + s.changed + s.removed, 0);
  // Six parts, two of them with new geometry: m0..m3 same, m4 and m5 changed, m6 and m7 gone.
  fs::remove_all(root_ / "prepared");
  testing::write_prepared(root_ / "prepared", 4);
  data::ShardWriter writer;
  for (int i = 0; i < 4; ++i) writer.add(data::Dataset::open(root_ / "prepared").graph(i));
  for (int i = 4; i < 6; ++i) {
    data::BRepGraph g = cadclip::testing::random_graph(3, 900 + i);
    g.id = "m" + std::to_string(i);
    writer.add(g);
  }
  writer.write(root_ / "prepared" / "shard-00000.safetensors");
  s = build_index(options(root_ / "prepared", root_ / "index"));
  EXPECT_EQ(s.unchanged, 4);
  EXPECT_EQ(s.changed, 2);
  EXPECT_EQ(s.removed, 2);
  EXPECT_EQ(s.parts, 6);
  EXPECT_EQ(Searcher::open(root_ / "index").size(), 6);
  EXPECT_EQ(Searcher::open(root_ / "index").find("m7"), nullptr);
}

#ifdef CADCLIP_WITH_OCCT
// The ingest limits reach the library's ingest and part queries: a part over
// one is listed with a reason that names the limit and its flag.
TEST_F(IndexTest, IngestLimitsReachTheLibraryAndPartQueries) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const fs::path library = root_ / "library";
  fs::create_directories(library);
  const fs::path small = CADCLIP_SHARED_DATA "/cad/aagnet/partA.step";  // 32 faces
  const fs::path large = CADCLIP_SHARED_DATA "/cad/aagnet/partC.step";  // 94 faces
  fs::copy_file(small, library / "small.step");
  fs::copy_file(large, library / "large.step");
  IndexOptions o = options(library, root_ / "index");
  o.limits.max_faces = 50;
  const IndexSummary s = build_index(o);
  EXPECT_EQ(s.parts, 1);
  EXPECT_EQ(s.failed, 1);
  const std::string failures = read_text_file(fs::path(s.version) / "failures.jsonl");
  EXPECT_NE(failures.find("large.step"), std::string::npos) << failures;
  EXPECT_NE(failures.find("94 faces, over the limit of 50 (--max-faces"), std::string::npos)
      << failures;
  EXPECT_NE(read_text_file(fs::path(s.version) / "options.json").find("\"max_faces\": 50"),
            std::string::npos);

  // Between the two files' sizes (110 and 375 KiB): the larger is never opened.
  o.limits = {};
  o.limits.max_file_mb = 0.2;
  o.out = (root_ / "index_by_size").string();
  const IndexSummary by_size = build_index(o);
  EXPECT_EQ(by_size.parts, 1);
  EXPECT_EQ(by_size.failed, 1);
  const std::string too_large = read_text_file(fs::path(by_size.version) / "failures.jsonl");
  EXPECT_NE(too_large.find("\"kind\":\"too_large\""), std::string::npos) << too_large;
  EXPECT_NE(too_large.find("over the limit of 0.2 MiB (--max-file-mb"), std::string::npos)
      << too_large;

  SearcherOptions limited;
  limited.worker_binary = CADCLIP_BINARY;  // this test binary is no worker
  limited.limits.max_faces = 50;
  const Searcher searcher = Searcher::open(root_ / "index", limited);
  try {
    searcher.search_like_file(large, 1);
    ADD_FAILURE() << "a 94-face part passed a limit of 50 faces";
  } catch (const data::IngestError& e) {
    EXPECT_EQ(e.failure().kind, data::FailureKind::kIngest);
    EXPECT_NE(e.failure().reason.find("over the limit of 50 (--max-faces"), std::string::npos)
        << e.failure().reason;
  }
  limited.limits = {};
  limited.limits.max_file_mb = 0.2;
  try {
    Searcher::open(root_ / "index", limited).search_like_file(large, 1);
    ADD_FAILURE() << "a part over --max-file-mb was read";
  } catch (const data::IngestError& e) {
    EXPECT_EQ(e.failure().kind, data::FailureKind::kTooLarge);
    EXPECT_NE(e.failure().reason.find("--max-file-mb"), std::string::npos) << e.failure().reason;
  }
}

TEST_F(IndexTest, CadFolderThroughWorkersWithFailuresAndUpdates) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const fs::path library = root_ / "library";
  fs::create_directories(library / "sub");
  const auto parts = testing::real_parts();
  fs::copy_file(parts[0], library / "a.step");
  fs::copy_file(parts[1], library / "sub" / "b.step");
  fs::copy_file(parts[2], library / "c.step");
  write_text_atomic(library / "broken.step", "ISO-10303-21;\nHEADER;\nENDSEC;\n");
  IndexSummary s = build_index(options(library, root_ / "index"));
  EXPECT_EQ(s.parts, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.thumbnails, 3);
  const std::string failures = read_text_file(fs::path(s.version) / "failures.jsonl");
  EXPECT_NE(failures.find("broken.step"), std::string::npos) << failures;
  EXPECT_NE(failures.find("\"kind\":\"ingest\""), std::string::npos) << failures;
  {
    SearcherOptions with_workers;
    with_workers.worker_binary = CADCLIP_BINARY;  // this test binary is no worker
    const Searcher searcher = Searcher::open(root_ / "index", with_workers);
    const Item* b = searcher.find("b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->source, (library / "sub" / "b.step").string());
    EXPECT_GT(b->faces, 0);
    EXPECT_GT(b->size_mm[0], 0);
    EXPECT_TRUE(fs::exists(searcher.version_folder() / "thumbnails" / b->thumbnail));
    // A part file is ingested in a worker and finds its own copy first.
    EXPECT_EQ(searcher.search_like_file(parts[2], 3).front().item->id, "c");
    EXPECT_THROW(searcher.search_like_file(library / "broken.step", 3), data::IngestError);
  }
  // c changes, a is renamed d (its content kept, not embedded again), e
  // arrives; b is not embedded again.
  fs::remove(library / "c.step");
  fs::copy_file(parts[3], library / "c.step");
  fs::rename(library / "a.step", library / "d.step");
  fs::copy_file(CADCLIP_SHARED_DATA "/cad/aagnet/partA.step", library / "e.step");
  s = build_index(options(library, root_ / "index"));
  EXPECT_EQ(s.unchanged, 1);
  EXPECT_EQ(s.changed, 1);
  EXPECT_EQ(s.moved, 1);
  EXPECT_EQ(s.added, 1);
  EXPECT_EQ(s.removed, 0);
  EXPECT_EQ(s.parts, 4);
  EXPECT_EQ(s.thumbnails, 2);  // c and e; d keeps a's drawing
  const Searcher after = Searcher::open(root_ / "index");
  EXPECT_EQ(after.find("a"), nullptr);
  ASSERT_NE(after.find("d"), nullptr);
  EXPECT_EQ(after.find("d")->source, (library / "d.step").string());
  EXPECT_TRUE(fs::exists(after.version_folder() / "thumbnails" / after.find("d")->thumbnail));
}

// --update and --metadata: parts are added, replaced, kept by content when
// their file moves, and removed; catalog fields come from a CSV by file name
// or path, follow the parts, and filter searches.
TEST_F(IndexTest, UpdateByContentAndPathWithCatalogFields) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const fs::path library = root_ / "library";
  fs::create_directories(library / "sub");
  const auto parts = testing::real_parts();
  fs::copy_file(parts[0], library / "a.step");
  fs::copy_file(parts[1], library / "sub" / "b.step");
  fs::copy_file(parts[2], library / "c.step");
  write_text_atomic(root_ / "fields.csv",
                    "file,Material,Project\na.step,steel,apollo\nsub/b.step,brass,gemini\n"
                    "c.step,steel,\nnot_here.step,lead,x\n");
  IndexOptions o = options(library, root_ / "index");
  o.update = true;
  try {
    build_index(o);
    FAIL() << "--update built a new index";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no index yet"), std::string::npos) << e.what();
  }
  o.update = false;
  o.metadata = (root_ / "fields.csv").string();
  IndexSummary s = build_index(o);
  EXPECT_EQ(s.added, 3);
  {
    const Searcher searcher = Searcher::open(root_ / "index");
    EXPECT_EQ(searcher.fields(), (std::vector<std::string>{"material", "project"}));
    EXPECT_EQ(*searcher.find("b")->field("material"), "brass");  // by its path in the library
    EXPECT_EQ(searcher.find("c")->field("project"), nullptr);    // an empty cell is no value
    for (const char* id : {"a", "b", "c"}) {
      EXPECT_EQ(searcher.find(id)->file_type, "step");
      EXPECT_GE(searcher.find(id)->holes, 0);
      EXPECT_FALSE(searcher.find(id)->geometry_hash.empty());
    }
    SearchOptions steel;
    steel.k = 10;
    steel.filter = parse_filter("material=steel");
    std::vector<std::string> ids;
    for (const Hit& h : searcher.query_item("b", steel).hits) ids.push_back(h.item->id);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"a", "c"}));
  }
  const StoredIndex before = read_stored_index(root_ / "index");
  // a moves into sub/ under a new name, c is replaced, b goes, e arrives.
  fs::rename(library / "a.step", library / "sub" / "a_renamed.step");
  fs::remove(library / "c.step");
  fs::copy_file(parts[3], library / "c.step");
  fs::remove(library / "sub" / "b.step");
  fs::copy_file(CADCLIP_SHARED_DATA "/cad/aagnet/partA.step", library / "e.step");
  write_text_atomic(root_ / "fields.csv",
                    "file,material,project\nsub/a_renamed.step,steel,apollo\nc.step,aluminium,\n");
  o.update = true;
  s = build_index(o);
  EXPECT_EQ(s.moved, 1);
  EXPECT_EQ(s.changed, 1);
  EXPECT_EQ(s.added, 1);
  EXPECT_EQ(s.removed, 1);
  EXPECT_EQ(s.unchanged, 0);
  EXPECT_EQ(s.parts, 3);
  const StoredIndex after = read_stored_index(root_ / "index");
  auto part = [](const StoredIndex& index, const std::string& id) {
    return *std::find_if(index.parts.begin(), index.parts.end(),
                         [&](const StoredPart& p) { return p.item.id == id; });
  };
  // The moved part kept its embedding and drawing, and took its new row's fields.
  EXPECT_EQ(part(after, "a_renamed").embedding, part(before, "a").embedding);
  EXPECT_TRUE(fs::exists(part(after, "a_renamed").thumbnail_file));
  EXPECT_EQ(*part(after, "a_renamed").item.field("project"), "apollo");
  EXPECT_EQ(*part(after, "c").item.field("material"), "aluminium");
  EXPECT_TRUE(part(after, "e").item.metadata.empty());
  // Without --metadata the next run keeps the fields parts have.
  o.metadata.clear();
  s = build_index(o);
  EXPECT_EQ(s.unchanged, 3);
  EXPECT_EQ(*Searcher::open(root_ / "index").find("c")->field("material"), "aluminium");
}

// The ingest workers draw the thumbnails, after sending the part's graph: a
// worker that crashes (SIGSEGV) or hangs while drawing costs that part its
// drawing, never the job or the part's place in the index.
TEST_F(IndexTest, ThumbnailCrashAndHangCostOnlyThatDrawing) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const fs::path library = root_ / "library";
  fs::create_directories(library);
  const auto parts = testing::real_parts();
  fs::copy_file(parts[0], library / "a.step");
  fs::copy_file(parts[1], library / "crash_drawing.step");
  fs::copy_file(parts[2], library / "hang_drawing.step");
  fs::copy_file(parts[3], library / "d.step");
  IndexOptions o = options(library, root_ / "index");
  o.limits.file_timeout_s = 3;  // the hung drawing's limit
  // The prepare worker's test hooks, read by the worker processes this job starts.
  ::setenv("CADCLIP_DEBUG_CRASH_DRAWING", "crash_drawing.step", 1);
  ::setenv("CADCLIP_DEBUG_HANG_DRAWING", "hang_drawing.step", 1);
  IndexSummary s = build_index(o);
  ::unsetenv("CADCLIP_DEBUG_CRASH_DRAWING");
  ::unsetenv("CADCLIP_DEBUG_HANG_DRAWING");
  EXPECT_EQ(s.parts, 4);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.thumbnails, 2);
  EXPECT_EQ(s.thumbnail_failures, 2);
  EXPECT_EQ(read_text_file(fs::path(s.version) / "failures.jsonl"), "");

  std::map<std::string, nlohmann::json> warnings = {{"crash_drawing", nullptr},
                                                    {"hang_drawing", nullptr}};
  const std::string text = read_text_file(fs::path(s.version) / "warnings.jsonl");
  size_t lines = 0;
  for (size_t at = 0, end; at < text.size(); at = end + 1, ++lines) {
    end = text.find('\n', at);
    const nlohmann::json w = nlohmann::json::parse(text.substr(at, end - at));
    ASSERT_TRUE(warnings.count(w["id"])) << text;
    warnings[w["id"]] = w;
  }
  EXPECT_EQ(lines, 2u) << text;
  const nlohmann::json& crash = warnings["crash_drawing"];
  EXPECT_EQ(crash["kind"], "thumbnail_crash");
  EXPECT_EQ(crash["path"], (library / "crash_drawing.step").string());
  EXPECT_NE(crash["reason"].get<std::string>().find("signal 11"), std::string::npos) << crash;
  EXPECT_NE(crash["reason"].get<std::string>().find("thumbnail"), std::string::npos) << crash;
  const nlohmann::json& hang = warnings["hang_drawing"];
  EXPECT_EQ(hang["kind"], "thumbnail_timeout");
  EXPECT_NE(hang["reason"].get<std::string>().find("--file-timeout"), std::string::npos) << hang;

  {
    const Searcher searcher = Searcher::open(root_ / "index");
    for (const char* id : {"a", "d"}) {
      const Item* item = searcher.find(id);
      ASSERT_NE(item, nullptr) << id;
      ASSERT_FALSE(item->thumbnail.empty()) << id;
      const std::string svg =
          read_text_file(searcher.version_folder() / "thumbnails" / item->thumbnail);
      EXPECT_NE(svg.find("<polyline"), std::string::npos) << id;
    }
    for (const char* id : {"crash_drawing", "hang_drawing"}) {
      const Item* item = searcher.find(id);
      ASSERT_NE(item, nullptr) << id << " must stay searchable without its drawing";
      EXPECT_TRUE(item->thumbnail.empty()) << id;
      EXPECT_GT(item->faces, 0) << id;
    }
  }

  // Unchanged parts are not redrawn, and their warnings stay listed.
  s = build_index(o);
  EXPECT_EQ(s.unchanged, 4);
  EXPECT_EQ(s.thumbnail_failures, 2);
  EXPECT_EQ(read_text_file(fs::path(s.version) / "warnings.jsonl"), text);
  // The unchanged drawings came along into the new version.
  const Searcher again = Searcher::open(root_ / "index");
  EXPECT_TRUE(fs::exists(again.version_folder() / "thumbnails" / again.find("a")->thumbnail));
}

// A prepared folder made with thumbnails brings its drawings (and the reasons
// for missing ones) into the index; one made without has none.
TEST_F(IndexTest, PreparedLibraryWithThumbnails) {
  CADCLIP_SKIP_WITHOUT_SHARED_DATA();
  const fs::path library = root_ / "library";
  fs::create_directories(library);
  const auto parts = testing::real_parts();
  fs::copy_file(parts[0], library / "a.step");
  fs::copy_file(parts[1], library / "b.step");
  cad::PrepareOptions p;
  p.inputs = {library.string()};
  p.out = (root_ / "prepared_cad").string();
  p.workers = 1;
  p.worker_binary = CADCLIP_BINARY;
  p.thumbnails = true;
  ::setenv("CADCLIP_DEBUG_CRASH_DRAWING", "b.step", 1);
  const cad::PrepareSummary prepared = cad::run_prepare(p);
  ::unsetenv("CADCLIP_DEBUG_CRASH_DRAWING");
  EXPECT_EQ(prepared.prepared, 2);
  EXPECT_EQ(prepared.thumbnails, 1);
  EXPECT_EQ(prepared.thumbnail_failures, 1);

  IndexSummary s = build_index(options(root_ / "prepared_cad", root_ / "index"));
  EXPECT_EQ(s.parts, 2);
  EXPECT_EQ(s.thumbnails, 1);
  EXPECT_EQ(s.thumbnail_failures, 1);
  const std::string warnings = read_text_file(fs::path(s.version) / "warnings.jsonl");
  EXPECT_NE(warnings.find("\"id\":\"b\""), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("thumbnail_crash"), std::string::npos) << warnings;
  const Searcher searcher = Searcher::open(root_ / "index");
  ASSERT_FALSE(searcher.find("a")->thumbnail.empty());
  EXPECT_TRUE(fs::exists(searcher.version_folder() / "thumbnails" / searcher.find("a")->thumbnail));
  EXPECT_TRUE(searcher.find("b")->thumbnail.empty());

  // The random-graph folder has no drawings: no thumbnails, no warnings.
  s = build_index(options(root_ / "prepared", root_ / "index2"));
  EXPECT_EQ(s.thumbnails, 0);
  EXPECT_EQ(s.thumbnail_failures, 0);
}
#endif

}  // namespace
}  // namespace cadclip::index
