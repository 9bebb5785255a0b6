// cadclip export CHECKPOINT --out models: a trained checkpoint as a released
// model, which holds what training changed (the B-Rep tower and heads, and
// any text tensor that moved, in fp16 by default) and finds the pretrained
// text tower it builds on by checksum.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/text/text_model.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct ExportCommandOptions {
  std::string checkpoint;               // the trained checkpoint (pointer, folder or run folder)
  std::string out;                      // the models folder: <out>/<name>/ and <out>/default.json
  std::string name = "cadclip-minilm";  // the released model's folder name under `out`
  // The pretrained text folder the run started from.
  std::string text_base = text::default_text_model_folder().string();
  bool fp32 = false;  // keep fp32 weights (twice the size)
};

CADCLIP_OPTION_FIELDS(
    ExportCommandOptions, (checkpoint, "Checkpoint: a run's best.json, its folder"),
    (out, "Models folder: writes <out>/<name>/ and <out>/default.json"),
    (name, "Folder name of the released model"),
    (text_base,
     "The pretrained text folder the run started from; its weights are named by checksum, not "
     "copied"),
    (fp32, "Keep the B-Rep tower, heads and changed text tensors in fp32 (default fp16)"))

int run_export(const ExportCommandOptions& o) {
  model::ExportOptions options;
  options.text_base = o.text_base;
  options.name = o.name;
  options.fp16 = !o.fp32;
  const std::filesystem::path pointer = model::export_model(o.checkpoint, o.out, options);
  // Loading it back is the check that it is whole and finds its text tower.
  const model::BuiltModel loaded = model::load_model_from_checkpoint(pointer);
  std::uintmax_t bytes = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(o.out) / o.name))
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
  const ConfigFlags config(command, o);
  add_field(command, "checkpoint", *o, o->checkpoint)->required()->check(CLI::ExistingPath);
  add_field(command, "--out", *o, o->out)->required();
  add_field(command, "--name", *o, o->name)->capture_default_str();
  add_field(command, "--text-base", *o, o->text_base)->capture_default_str();
  add_switch(command, "--fp32", *o, o->fp32);
  run = config.or_print([o] { return run_export(*o); });
}

}  // namespace cadclip::app
