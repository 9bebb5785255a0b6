// cadclip check PATH: what a safetensors file holds, and whether any tensor
// carries NaN or Inf.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "cadclip/core/format.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"
#include "command.h"
#include "option_flags.h"

namespace cadclip::app {
namespace {

struct CheckOptions {
  std::string path;    // the safetensors file to check
  bool quiet = false;  // print only the verdict, not every tensor
};

CADCLIP_OPTION_FIELDS(CheckOptions, (path, "safetensors file (a checkpoint, a shard, any model)"),
                      (quiet, "Print only the verdict"))

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

int run_check(const CheckOptions& options) {
  const SafetensorsReader file = SafetensorsReader::open(options.path);
  const HealthReport report = scan_health(file);
  if (!options.quiet) {
    std::printf("%-60s %-6s %-20s %12s %8s %8s\n", "tensor", "dtype", "shape", "elements", "NaN",
                "Inf");
    for (size_t i = 0; i < report.tensors.size(); ++i) {
      const TensorInfo& info = file.tensors()[i];
      const TensorHealth& health = report.tensors[i];
      std::printf("%-60s %-6s %-20s %12s %8s %8s\n", info.name.c_str(),
                  std::string(dtype_name(info.dtype)).c_str(), shape_text(info.shape).c_str(),
                  with_commas(health.numel).c_str(), with_commas(health.nan).c_str(),
                  with_commas(health.inf).c_str());
    }
    for (const auto& [key, value] : file.metadata())
      std::printf("metadata %s = %s\n", key.c_str(), value.c_str());
  }
  if (report.healthy()) {
    std::printf("%s: healthy, %zu tensors, no NaN or Inf\n", options.path.c_str(),
                report.tensors.size());
    return kExitOk;
  }
  std::printf("%s: SICK: %s\n", options.path.c_str(), report.sick_summary().c_str());
  return kExitFindings;
}

}  // namespace

void define_check(CLI::App& command, Runner& run) {
  auto options = std::make_shared<CheckOptions>();
  const ConfigFlags config(command, options);
  add_field(command, "path", *options, options->path)->required()->check(CLI::ExistingFile);
  add_switch(command, "--quiet", *options, options->quiet);
  command.footer("Exit status: 0 healthy, 1 some tensor holds NaN or Inf, 2 not a valid file.");
  run = config.or_print([options] { return run_check(*options); });
}

}  // namespace cadclip::app
