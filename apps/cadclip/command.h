// The table of cadclip's subcommands. Each job lives in cmd_<job>.cc and
// defines its options struct, its flags (one per field) and its run function.
#pragma once

#include <functional>
#include <span>

namespace CLI {
class App;
}

namespace cadclip::app {

// Filled by a command's define(): runs the job after parsing, returns the exit code.
using Runner = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;
  void (*define)(CLI::App& command, Runner& run);
};

std::span<const Command> commands();

// The process's own arguments (main sets them), for jobs that start copies of
// themselves, such as `train --nproc`.
struct CommandLine {
  int argc = 0;
  char** argv = nullptr;
};
CommandLine& command_line();

// Exit codes shared by every job.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings =
    1;                                // the job ran and found problems (failed items, sick tensors)
inline constexpr int kExitError = 2;  // bad input or usage: nothing was done

}  // namespace cadclip::app
