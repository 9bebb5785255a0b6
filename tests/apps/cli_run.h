// Runs the cadclip binary the tests were built with, as a user would from a
// shell, and keeps its exit status and output.
#pragma once

#include <string>

#include "../run_command.h"

namespace cadclip::testing {

using CliRun = CommandRun;

// `cadclip ARGS` through the shell; quote arguments as a shell needs them.
inline CliRun run_cadclip(const std::string& args, bool with_stderr = true) {
  return run_command(std::string(CADCLIP_BINARY) + " " + args + (with_stderr ? "" : " 2>/dev/null"),
                     with_stderr);
}

}  // namespace cadclip::testing
