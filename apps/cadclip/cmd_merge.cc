// cadclip merge FOLDERS... --out DIR: one prepared folder over many (the parts
// of a sharded prepare, or datasets side by side), without copying shards.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cadclip/data/merge.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {

void define_merge(CLI::App& command, Runner& run) {
  auto o = std::make_shared<data::MergeOptions>();
  const ConfigFlags config(command, o);
  add_field(command, "inputs", *o, o->inputs)->required();
  add_field(command, "--out", *o, o->out)->required();
  add_switch(command, "--allow-missing-shards", *o, o->allow_missing_shards);
  add_switch(command, "--overwrite", *o, o->overwrite);
  command.footer(
      "The merged folder holds a manifest listing the folders' shards by relative path (no "
      "shard is copied), and the merged captions, splits, failures and warnings; keep the "
      "folders where they are (or move them together with it). Exit status: 0 merged, 2 bad "
      "input (ids in two folders, missing parts); nothing is written then.");
  run = config.or_print([o] {
    const data::MergeSummary s = data::merge_prepared(*o);
    std::printf("%lld folders: %lld models in %lld shards, %lld captions (see %s/manifest.json)\n",
                static_cast<long long>(s.folders), static_cast<long long>(s.models),
                static_cast<long long>(s.shards), static_cast<long long>(s.captions),
                o->out.c_str());
    return kExitOk;
  });
}

}  // namespace cadclip::app
