#include "option_flags.h"

#include <cstdio>

#include "cadclip/core/error.h"

namespace cadclip::app {

std::string help_text(std::string_view described, const std::string& flag) {
  CADCLIP_CHECK(!described.empty(), "{} is bound to a field its options struct does not describe",
                flag);
  return std::string(described);
}

void ConfigFlags::add_flags(CLI::App& command, Reader read) {
  command.add_option_function<std::string>(
      "--config", [read = std::move(read)](const std::string& file) { read(file); },
      "JSON file of options, as --print-config writes them; options given beside it override "
      "it");
  command.add_flag("--print-config", *print_,
                   "Print the options in effect (the file, then the flags) as JSON, the form "
                   "--config reads, instead of running");
}

Runner ConfigFlags::or_print(Runner run) const {
  return [print = print_, json = json_, run = std::move(run)] {
    if (!*print) return run();
    const std::string text =
        json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  };
}

}  // namespace cadclip::app
