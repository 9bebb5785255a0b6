#include "command.h"

namespace cadclip::app {

void define_check(CLI::App& command, Runner& run);

std::span<const Command> commands() {
  static const Command kCommands[] = {
      {"check", "Health report of a safetensors file: dtypes, shapes, NaN/Inf per tensor",
       define_check},
  };
  return kCommands;
}

}  // namespace cadclip::app
