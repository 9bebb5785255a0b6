// cadclip: one binary, one subcommand per job (see command.h for the table).
#include <malloc.h>
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/log.h"
#include "command.h"

namespace {

std::string version_text() {
  std::string text = "cadclip " CADCLIP_VERSION "\nLibTorch " TORCH_VERSION;
#ifdef CADCLIP_WITH_OCCT
  text += "\nOpen CASCADE: built in";
#else
  text += "\nOpen CASCADE: not built in (CAD ingest, thumbnails and part uploads are off)";
#endif
  return text;
}

}  // namespace

namespace cadclip::app {
CommandLine& command_line() {
  static CommandLine line;
  return line;
}
}  // namespace cadclip::app

int main(int argc, char** argv) {
  using namespace cadclip;
  app::command_line() = {argc, argv};
  // LibTorch allocates large activation buffers every step; by default glibc
  // maps and unmaps each of them, faulting in fresh zeroed pages every time
  // (measured: ~20% of a training step's wall time in the kernel). Keep them.
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  CLI::App app{
      "cadclip finds the CAD part a sentence describes: it trains and evaluates text<->B-Rep "
      "retrieval models and searches part libraries by text or by example part.",
      "cadclip"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", version_text(), "Print cadclip's and LibTorch's versions");
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error or off (default: $CADCLIP_LOG_LEVEL, else info)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error", "off"},
                            CLI::ignore_case));

  std::map<CLI::App*, app::Runner> runners;
  for (const app::Command& command : app::commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    command.define(*sub, runners[sub]);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 says "argument not expected"; name the likely mistake instead.
    const std::vector<std::string> extras = app.remaining();
    if (!extras.empty() && !extras.front().starts_with("-") && !app.get_subcommands().size()) {
      std::string names;
      for (const app::Command& command : app::commands())
        names += (names.empty() ? "" : ", ") + std::string(command.name);
      std::fprintf(stderr,
                   "cadclip: unknown command '%s'; the commands are: %s (see cadclip --help)\n",
                   extras.front().c_str(), names.c_str());
      return app::kExitError;
    }
    const int code = app.exit(e);
    return code == 0 ? app::kExitOk : app::kExitError;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? app::kExitOk : app::kExitError;
  } catch (const Error& e) {
    // An option that reads a file while parsing (--config) found it bad.
    std::fprintf(stderr, "cadclip: %s\n", e.what());
    return app::kExitError;
  }

  try {
    log::init_from_environment();
    if (!log_level.empty()) log::set_level(*log::parse_level(log_level));
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
    std::fputs(app.help().c_str(), stdout);
    return app::kExitOk;
  } catch (const Error& e) {
    log::error("cadclip", "{}", e.what());
    return app::kExitError;
  } catch (const std::exception& e) {
    log::error("cadclip", "unexpected failure: {}", e.what());
    return app::kExitError;
  }
}
