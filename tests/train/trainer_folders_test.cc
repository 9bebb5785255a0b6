// Training on a dataset of several folders: the four parts of a sharded
// prepare train bitwise like the folder `cadclip merge` writes over them,
// and like one folder holding every model; the loader threads and the
// pairwise cache change nothing either.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cadclip/data/merge.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/trainer.h"
#include "tiny_prepared.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;
using testing::TensorBytes;

TensorBytes trained(const TrainOptions& o) {
  auto comm = make_single_process_communicator();
  train(o, *comm);
  TensorBytes all = testing::weight_bytes(o.out);
  for (auto& [name, bytes] : testing::state_bytes(o.out)) all["state:" + name] = std::move(bytes);
  return all;
}

TEST(TrainerFolders, FourPartsTrainBitwiseLikeTheirMergedFolderAndLikeOneFolder) {
  const fs::path root =
      fs::temp_directory_path() / ("cadclip_trainer_folders_" + std::to_string(::getpid()));
  fs::remove_all(root);
  // 14 models; parts as a 4-way prepare might cut them (one is empty-ish, sizes differ).
  const std::vector<std::vector<int>> parts = {
      {0, 5, 9, 13}, {1, 2, 6}, {3, 7, 10, 11}, {4, 8, 12}};
  std::vector<int> every;
  std::vector<fs::path> folders;
  for (size_t p = 0; p < parts.size(); ++p) {
    folders.push_back(root / ("part-" + std::to_string(p)));
    testing::write_tiny_prepared(folders.back(), parts[p]);
    every.insert(every.end(), parts[p].begin(), parts[p].end());
  }
  std::sort(every.begin(), every.end());
  testing::write_tiny_prepared(root / "whole", every);
  data::MergeOptions merge;
  for (const fs::path& f : folders) merge.inputs.push_back(f.string());
  merge.out = (root / "merged").string();
  ASSERT_EQ(data::merge_prepared(merge).models, 14);

  // The reference: one folder, inputs made inside the step, no pairwise inputs kept.
  TrainOptions whole = testing::tiny_train_options({root / "whole"}, root / "run_whole");
  whole.loader_threads = 0;
  whole.pairwise_cache_mb = 0;
  const TensorBytes expected = trained(whole);

  TrainOptions four = testing::tiny_train_options(folders, root / "run_four");
  four.loader_threads = 2;
  testing::expect_same_tensors(expected, trained(four), "four folders, two loader threads");
  const TensorBytes merged =
      trained(testing::tiny_train_options({root / "merged"}, root / "run_merged"));
  testing::expect_same_tensors(expected, merged, "the merged folder");
  fs::remove_all(root);
}

}  // namespace
}  // namespace cadclip::train
