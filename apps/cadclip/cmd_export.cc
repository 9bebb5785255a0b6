// cadclip export CHECKPOINT --out models: a trained checkpoint as a released
// model, which holds what training changed (the B-Rep tower and heads, in
// fp16 by default, and any text tensor that moved) and finds the pretrained
// text tower it builds on by checksum.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cadclip/core/format.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/text/text_model.h"
#include "command.h"

namespace cadclip::app {
namespace {

struct ExportCommandOptions {
  std::string checkpoint;  // the trained checkpoint (pointer, folder or run folder)
  std::string out;         // the models folder: <out>/<name>/ and <out>/default.json
  model::ExportOptions model;
  bool fp32 = false;  // keep fp32 weights (twice the size)
};

int run_export(ExportCommandOptions o) {
  o.model.fp16 = !o.fp32;
  const std::filesystem::path pointer = model::export_model(o.checkpoint, o.out, o.model);
  // Loading it back is the check that it is whole and finds its text tower.
  const model::BuiltModel loaded = model::load_model_from_checkpoint(pointer);
  std::uintmax_t bytes = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(o.out) / o.model.name))
    if (entry.is_regular_file()) bytes += entry.file_size();
  std::printf("exported %s -> %s (%s, identity %s), text tower from %s\n", o.checkpoint.c_str(),
              pointer.c_str(), human_bytes(bytes).c_str(),
              model::checkpoint_identity(pointer).substr(0, 16).c_str(),
              loaded.config.text_folder.c_str());
  return kExitOk;
}

}  // namespace

void define_export(CLI::App& command, Runner& run) {
  auto o = std::make_shared<ExportCommandOptions>();
  o->model.text_base = text::default_text_model_folder();
  o->model.name = "cadclip-minilm";
  command.add_option("checkpoint", o->checkpoint, "Checkpoint: a run's best.json, its folder")
      ->required()
      ->check(CLI::ExistingPath);
  command.add_option("--out", o->out, "Models folder: writes <out>/<name>/ and <out>/default.json")
      ->required();
  command.add_option("--name", o->model.name, "Folder name of the released model")
      ->capture_default_str();
  command
      .add_option("--text-base", o->model.text_base,
                  "The pretrained text folder the run started from; its weights are named by "
                  "checksum, not copied")
      ->capture_default_str();
  command.add_flag("--fp32", o->fp32, "Keep the B-Rep tower and heads in fp32 (default fp16)");
  run = [o] { return run_export(*o); };
}

}  // namespace cadclip::app
