// Flags bound to the fields of a job's options struct, with the help its
// field descriptions give (CADCLIP_OPTION_FIELDS, core/json_fields.h), and
// the struct as a config file: --config FILE and --print-config.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cadclip/core/json_fields.h"
#include "command.h"

namespace cadclip::app {

// `described` as a flag's help; aborts when it is empty: a flag was bound to
// a field its struct does not describe.
std::string help_text(std::string_view described, const std::string& flag);

// The help of `field`, a member of `options`, from the struct's description.
template <class Options, class T>
std::string help(const Options& options, const T& field, const std::string& flag) {
  return help_text(field_help(options, &field), flag);
}

// An option (or positional argument) bound to `field`, a member of `options`.
template <class Options, class T>
CLI::Option* add_field(CLI::App& command, const std::string& flag, const Options& options,
                       T& field) {
  return command.add_option(flag, field, help(options, field, flag));
}

// A flag given once per value ("--data A --data B"), bound to the list
// `field`: each occurrence takes one value, none swallows the next argument.
template <class Options>
CLI::Option* add_repeated(CLI::App& command, const std::string& flag, const Options& options,
                          std::vector<std::string>& field) {
  return add_field(command, flag, options, field)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// A switch bound to the bool `field` ("!--no-x" sets it false).
template <class Options>
CLI::Option* add_switch(CLI::App& command, const std::string& flag, const Options& options,
                        bool& field) {
  return command.add_flag(flag, field, help(options, field, flag));
}

// --config FILE reads a JSON file into the job's options struct, before the
// flags given beside it (which override the file's values), and
// --print-config prints the options in effect, as that JSON, instead of
// running the job. Make it before the command's other flags: CLI11 assigns
// options in the order they are defined.
class ConfigFlags {
 public:
  using Reader = std::function<void(const std::filesystem::path& file)>;

  // `read` fills the options from a file; by default read_options_file.
  template <class Options>
  ConfigFlags(CLI::App& command, std::shared_ptr<Options> options, Reader read = {})
      : print_(std::make_shared<bool>(false)),
        json_([options] { return nlohmann::json(*options); }) {
    if (!read)
      read = [options](const std::filesystem::path& file) { read_options_file(file, *options); };
    add_flags(command, std::move(read));
  }

  // `run`, or the printing of the options when --print-config was given.
  Runner or_print(Runner run) const;

 private:
  void add_flags(CLI::App& command, Reader read);

  std::shared_ptr<bool> print_;
  std::function<nlohmann::json()> json_;
};

}  // namespace cadclip::app
