// Test-only: runs a shell command (a Python script, `ip`, cadclip under `env`)
// and keeps its exit status and what it wrote; tests/apps/cli_run.h runs
// the cadclip binary through it.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cadclip::testing {

struct CommandRun {
  int exit_code = -1;  // -1 when it did not start or did not exit (a signal)
  std::string output;  // stdout, and stderr when asked for
};

inline CommandRun run_command(const std::string& command, bool with_stderr = true) {
  CommandRun run;
  std::FILE* pipe = ::popen((with_stderr ? command + " 2>&1" : command).c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace cadclip::testing
