#include "command.h"

namespace cadclip::app {

void define_check(CLI::App& command, Runner& run);
#ifdef CADCLIP_WITH_OCCT
void define_synth(CLI::App& command, Runner& run);
#endif

std::span<const Command> commands() {
  static const Command kCommands[] = {
      {"check", "Health report of a safetensors file: dtypes, shapes, NaN/Inf per tensor",
       define_check},
#ifdef CADCLIP_WITH_OCCT
      {"synth", "Make the built-in synthetic dataset: parametric parts as STEP with captions", define_synth},
#endif
  };
  return kCommands;
}

}  // namespace cadclip::app
