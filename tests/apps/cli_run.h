// Runs the cadclip binary the tests were built with, as a user would from a
// shell, and keeps its exit status and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace cadclip::testing {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout, and with `with_stderr` stderr too
};

// `cadclip ARGS` through the shell; quote arguments as a shell needs them.
inline CliRun run_cadclip(const std::string& args, bool with_stderr = true) {
  const std::string command =
      std::string(CADCLIP_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace cadclip::testing
