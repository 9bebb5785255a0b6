// A dataset of several prepared folders: read as one (captions and splits
// merged as one prepare writes them), ids distinct across folders, dataset
// files, and `cadclip merge`'s folder, which lists the shards of the others
// without copying them and checks that the parts of a sharded prepare are all
// there. Also the pairwise cache and the collation in size groups.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "../error_of.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/data/batch.h"
#include "cadclip/data/captions.h"
#include "cadclip/data/merge.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/data/prepared.h"
#include "cadclip/data/shard.h"
#include "cadclip/data/splits.h"
#include "test_graphs.h"

namespace cadclip::data {
namespace {

namespace fs = std::filesystem;
using testing::chain_graph;
using testing::same_graph;
using testing::ScratchDir;

// A prepared folder as `cadclip prepare` writes it: one shard of the models
// `ids` (id i has i % 5 + 2 faces), two captions each, the splits given by the
// id's first letter after '-' ('t' train, 'v' validation, else test), and a
// manifest; `shard` is its "shard" object, if any.
void write_prepared(const fs::path& folder, const std::vector<std::string>& ids,
                    const nlohmann::json& shard = nullptr) {
  fs::create_directories(folder / "shards");
  ShardWriter writer;
  std::vector<Caption> captions;
  Splits splits;
  int64_t faces = 0;
  for (const std::string& id : ids) {
    const int n = static_cast<int>(std::hash<std::string>{}(id) % 5) + 2;
    writer.add(chain_graph(id, n, static_cast<float>(id.size()) + 0.5f));
    faces += n;
    captions.push_back({id, "abstract", "a part called " + id});
    captions.push_back({id, "expert", "the expert words on " + id});
    const char kind = id[id.find('-') + 1];
    (kind == 't' ? splits.train : kind == 'v' ? splits.validation : splits.test).push_back(id);
  }
  writer.write(folder / "shards" / "shard-00000.safetensors");
  nlohmann::json manifest = {
      {"format", "cadclip.prepared"},
      {"manifest_version", 1},
      {"shard_schema_version", kShardSchemaVersion},
      {"counts", {{"inputs", ids.size() + 1}, {"prepared", ids.size()}, {"failed", 1}}},
      {"failed_by_kind", {{"ingest", 1}}},
      {"faces", faces},
      {"edges", 0},
      {"shards", {{{"file", "shards/shard-00000.safetensors"}, {"models", ids.size()}}}}};
  if (!shard.is_null()) manifest["shard"] = shard;
  write_text_atomic(folder / "manifest.json", manifest.dump(1));
  write_captions_jsonl(folder / "captions.jsonl", captions);
  write_splits(folder / "splits.json", splits);
  write_text_atomic(folder / "failures.jsonl",
                    nlohmann::json{{"path", "/in/" + folder.filename().string() + ".step"},
                                   {"id", "bad-" + folder.filename().string()},
                                   {"kind", "ingest"},
                                   {"reason", "no solid"}}
                            .dump() +
                        "\n");
}

using cadclip::testing::error_of;

std::vector<std::string> caption_keys(const CaptionFile& file) {
  std::vector<std::string> keys;
  for (const Caption& c : file.captions) keys.push_back(c.id + "|" + c.level + "|" + c.text);
  return keys;
}

TEST(PreparedData, SeveralFoldersReadAsOneWithCaptionsAndSplitsMergedAsOnePrepareWritesThem) {
  ScratchDir dir("prepared-several");
  write_prepared(dir.path() / "a", {"p-t1", "p-v2", "r-t3"});
  write_prepared(dir.path() / "b", {"m-e4", "q-t5"});
  const PreparedData d = open_prepared({dir.path() / "a", dir.path() / "b"});
  ASSERT_EQ(d.dataset.size(), 5);
  EXPECT_EQ(d.dataset.ids(), (std::vector<std::string>{"p-t1", "p-v2", "r-t3", "m-e4", "q-t5"}));
  EXPECT_TRUE(same_graph(d.dataset.graph(3), Dataset::open(dir.path() / "b").graph(0)));
  // Captions: ids sorted, each id's captions in file order.
  std::vector<std::string> ids;
  for (const Caption& c : d.captions.captions) ids.push_back(c.id + ":" + c.level);
  EXPECT_EQ(
      ids, (std::vector<std::string>{"m-e4:abstract", "m-e4:expert", "p-t1:abstract", "p-t1:expert",
                                     "p-v2:abstract", "p-v2:expert", "q-t5:abstract", "q-t5:expert",
                                     "r-t3:abstract", "r-t3:expert"}));
  EXPECT_EQ(d.splits.train, (std::vector<std::string>{"p-t1", "q-t5", "r-t3"}));
  EXPECT_EQ(d.splits.validation, std::vector<std::string>{"p-v2"});
  EXPECT_EQ(d.splits.test, std::vector<std::string>{"m-e4"});
  EXPECT_EQ(d.sources, (std::vector<fs::path>{dir.path() / "a", dir.path() / "b"}));
}

TEST(PreparedData, OneIdInTwoFoldersIsAnErrorNamingBoth) {
  ScratchDir dir("prepared-twice");
  write_prepared(dir.path() / "first", {"p-t1", "p-t2"});
  write_prepared(dir.path() / "second", {"p-t3", "p-t2"});
  const std::string error = error_of([&] {
    open_prepared({dir.path() / "first", dir.path() / "second"});
  });
  EXPECT_NE(error.find("model id 'p-t2' is in both " + (dir.path() / "first").string() + " and " +
                       (dir.path() / "second").string()),
            std::string::npos)
      << error;
}

TEST(PreparedData, ADatasetFileListsFoldersRelativeToItself) {
  ScratchDir dir("prepared-list");
  write_prepared(dir.path() / "parts" / "0", {"p-t1"});
  write_prepared(dir.path() / "parts" / "1", {"p-t2"});
  write_text_atomic(dir.path() / "parts" / "all.txt",
                    "# the two parts\n0\n\n  " + (dir.path() / "parts" / "1").string() + "  \n");
  const std::vector<fs::path> folders =
      dataset_folders({(dir.path() / "parts" / "all.txt").string()});
  ASSERT_EQ(folders.size(), 2u);
  EXPECT_EQ(folders[0], dir.path() / "parts" / "0");
  EXPECT_EQ(open_prepared(folders).dataset.size(), 2);

  write_text_atomic(dir.path() / "bad.txt", "parts/0\nparts/nowhere\n");
  const std::string bad = error_of([&] { dataset_folders({(dir.path() / "bad.txt").string()}); });
  EXPECT_NE(bad.find("line 2 names " + (dir.path() / "parts" / "nowhere").string()),
            std::string::npos)
      << bad;
  write_text_atomic(dir.path() / "empty.txt", "# nothing\n");
  EXPECT_NE(error_of([&] {
              dataset_folders({(dir.path() / "empty.txt").string()});
            }).find("names no folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              dataset_folders({(dir.path() / "missing").string()});
            }).find("does not exist"),
            std::string::npos);
}

TEST(MergePrepared, WritesOneManifestOverTheFoldersWithoutCopyingAShard) {
  ScratchDir dir("merge");
  write_prepared(dir.path() / "a", {"p-t1", "p-v2", "r-t3"});
  write_prepared(dir.path() / "b", {"m-e4", "q-t5"});
  MergeOptions o;
  o.inputs = {(dir.path() / "a").string(), (dir.path() / "b").string()};
  o.out = (dir.path() / "merged").string();
  const MergeSummary s = merge_prepared(o);
  EXPECT_EQ(s.models, 5);
  EXPECT_EQ(s.shards, 2);
  EXPECT_EQ(s.folders, 2);
  EXPECT_EQ(s.captions, 10);
  for (const auto& entry : fs::recursive_directory_iterator(dir.path() / "merged"))
    EXPECT_NE(entry.path().extension(), ".safetensors") << entry.path();

  const nlohmann::json manifest =
      nlohmann::json::parse(read_text_file(dir.path() / "merged" / "manifest.json"));
  EXPECT_EQ(manifest["counts"]["prepared"], 5);
  EXPECT_EQ(manifest["counts"]["inputs"], 7);
  EXPECT_EQ(manifest["counts"]["failed"], 2);
  EXPECT_EQ(manifest["failed_by_kind"]["ingest"], 2);
  EXPECT_EQ(manifest["shards"][0]["file"], "../a/shards/shard-00000.safetensors");
  EXPECT_EQ(manifest["merged"]["folders"][1]["path"], "../b");
  const std::string failures = read_text_file(dir.path() / "merged" / "failures.jsonl");
  EXPECT_LT(failures.find("bad-a"), failures.find("bad-b")) << failures;

  // Read as one folder, it is the two read side by side.
  const PreparedData two = open_prepared({dir.path() / "a", dir.path() / "b"});
  const PreparedData merged = open_prepared({dir.path() / "merged"});
  EXPECT_EQ(merged.dataset.ids(), two.dataset.ids());
  for (int64_t i = 0; i < two.dataset.size(); ++i)
    EXPECT_TRUE(same_graph(merged.dataset.graph(i), two.dataset.graph(i))) << i;
  EXPECT_EQ(caption_keys(merged.captions), caption_keys(two.captions));
  EXPECT_EQ(merged.splits.train, two.splits.train);
  EXPECT_EQ(merged.splits.test, two.splits.test);
  EXPECT_EQ(merged.sources, two.sources);

  // The tree moves as a whole: the paths are relative.
  fs::rename(dir.path(), dir.path().string() + "-moved");
  const fs::path moved = dir.path().string() + "-moved";
  EXPECT_EQ(Dataset::open(moved / "merged").size(), 5);
  fs::rename(moved, dir.path());

  // A second merge into the same folder needs --overwrite; a prepared folder is never a target.
  EXPECT_NE(error_of([&] { merge_prepared(o); }).find("pass --overwrite"), std::string::npos);
  o.overwrite = true;
  EXPECT_EQ(merge_prepared(o).models, 5);
  o.out = (dir.path() / "a").string();
  EXPECT_NE(error_of([&] { merge_prepared(o); }).find("one of the folders to merge"),
            std::string::npos);
  write_prepared(dir.path() / "other", {"z-t9"});
  o.out = (dir.path() / "other").string();
  EXPECT_NE(error_of([&] { merge_prepared(o); }).find("prepared folder with its own shards"),
            std::string::npos);
}

TEST(MergePrepared, MissingOrRepeatedPartsOfAShardedPrepareAreRefusedUnlessAllowed) {
  ScratchDir dir("merge-parts");
  auto part = [](int index) {
    return nlohmann::json{{"index", index}, {"count", 3}, {"inputs", 6}, {"inputs_sha256", "abc"}};
  };
  write_prepared(dir.path() / "p0", {"p-t1", "p-t2"}, part(0));
  write_prepared(dir.path() / "p2", {"p-t5", "p-t6"}, part(2));
  MergeOptions o;
  o.inputs = {(dir.path() / "p0").string(), (dir.path() / "p2").string()};
  o.out = (dir.path() / "merged").string();
  const std::string missing = error_of([&] { merge_prepared(o); });
  EXPECT_NE(missing.find("parts 1 of the 3-way prepare of 6 inputs are missing"), std::string::npos)
      << missing;
  EXPECT_NE(missing.find("--allow-missing-shards"), std::string::npos) << missing;
  EXPECT_FALSE(fs::exists(dir.path() / "merged" / "manifest.json"));
  o.allow_missing_shards = true;
  EXPECT_EQ(merge_prepared(o).models, 4);

  write_prepared(dir.path() / "p1", {"p-t3", "p-t4"}, part(1));
  write_prepared(dir.path() / "p1-again", {"p-t7"}, part(1));
  o.allow_missing_shards = false;
  o.overwrite = true;
  o.inputs = {(dir.path() / "p0").string(), (dir.path() / "p1").string(),
              (dir.path() / "p1-again").string(), (dir.path() / "p2").string()};
  const std::string twice = error_of([&] { merge_prepared(o); });
  EXPECT_NE(twice.find("part 1 of the 3-way prepare of 6 inputs is given twice"), std::string::npos)
      << twice;
  // A merged folder counts as its parts: merging it with the rest completes the set.
  o.inputs = {(dir.path() / "p1").string(), (dir.path() / "merged").string()};
  o.out = (dir.path() / "all").string();
  EXPECT_EQ(merge_prepared(o).models, 6);
  EXPECT_EQ(open_prepared({dir.path() / "all"}).sources.size(), 3u);
}

TEST(PreparedData, AccessHintsAndPrefetchChangeNoValue) {
  ScratchDir dir("prepared-hints");
  write_prepared(dir.path() / "a", {"p-t1", "p-v2", "r-t3"});
  const Dataset plain = Dataset::open(dir.path() / "a");
  const Dataset hinted = Dataset::open(dir.path() / "a");
  hinted.advise(Dataset::Access::kRandom);
  for (int64_t i = 2; i >= 0; --i) {
    hinted.prefetch(i);
    EXPECT_TRUE(same_graph(hinted.graph(i), plain.graph(i))) << i;
  }
  hinted.advise(Dataset::Access::kSequential);
  EXPECT_TRUE(same_graph(hinted.graph(1), plain.graph(1)));
  EXPECT_THROW(hinted.prefetch(3), Error);
}

TEST(PairwiseCache, ComputesEachModelOnceAndKeepsItWithinTheBudget) {
  const BRepGraph a = chain_graph("a", 6, 1.5f), b = chain_graph("b", 9, 2.5f);
  PairwiseCache cache(/*models=*/2, /*max_bytes=*/1 << 20);
  const auto first = cache.get(0, a);
  EXPECT_EQ(cache.get(0, a).get(), first.get());
  const PairwiseInputs fresh = pairwise_inputs(a);
  EXPECT_EQ(first->hops, fresh.hops);
  EXPECT_EQ(first->normal_angle, fresh.normal_angle);
  EXPECT_EQ(first->centroid_distance, fresh.centroid_distance);
  cache.get(1, b);
  const PairwiseCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.computed, 2);
  EXPECT_EQ(stats.kept, 2);
  EXPECT_EQ(stats.bytes,
            PairwiseCache::bytes_of(fresh) + PairwiseCache::bytes_of(*cache.get(1, b)));
  EXPECT_GE(PairwiseCache::bytes_of(fresh), 12 * 6 * 6);
  EXPECT_THROW(cache.get(2, a), Error);

  // A budget that holds one model: the second is computed at every use.
  PairwiseCache small(2, PairwiseCache::bytes_of(fresh));
  small.get(0, a);
  EXPECT_NE(small.get(1, b).get(), small.get(1, b).get());
  EXPECT_EQ(small.stats().kept, 1);
  EXPECT_EQ(small.stats().not_kept, 2);
  PairwiseCache none(2, 0);
  none.get(0, a);
  EXPECT_EQ(none.stats().kept, 0);
}

TEST(CollateGroups, GroupsCoverTheBatchAndCachedPairwiseInputsGiveTheSameTensors) {
  std::vector<BRepGraph> graphs;
  for (int i = 0; i < 7; ++i)
    graphs.push_back(chain_graph("g" + std::to_string(i), i % 2 ? 3 : 120 + i, 0.5f + i));
  std::vector<const BRepGraph*> pointers;
  std::vector<PairwiseInputs> computed;
  for (const BRepGraph& g : graphs) {
    pointers.push_back(&g);
    computed.push_back(pairwise_inputs(g));
  }
  std::vector<const PairwiseInputs*> pairwise;
  for (const PairwiseInputs& p : computed) pairwise.push_back(&p);
  const GroupedBatch plain = collate_groups(pointers);
  const GroupedBatch cached = collate_groups(pointers, pairwise);
  ASSERT_GT(plain.groups.size(), 1u) << "small and large graphs should be grouped apart";
  std::vector<int64_t> rows = plain.row_of;
  std::sort(rows.begin(), rows.end());
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)], i);
  ASSERT_EQ(cached.groups.size(), plain.groups.size());
  EXPECT_EQ(cached.row_of, plain.row_of);
  for (size_t g = 0; g < plain.groups.size(); ++g) {
    const auto a = plain.groups[g].named_tensors(), b = cached.groups[g].named_tensors();
    for (size_t t = 0; t < a.size(); ++t)
      EXPECT_TRUE(at::equal(a[t].second, b[t].second)) << a[t].first;
  }
  EXPECT_THROW(collate_groups(pointers, std::span(pairwise).first(2)), Error);
}

}  // namespace
}  // namespace cadclip::data
