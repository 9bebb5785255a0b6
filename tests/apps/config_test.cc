// --config and --print-config on every subcommand that takes options: what
// --print-config writes, fed back with --config, gives the same options, and
// a value of the wrong type is an error naming its key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;

using cadclip::testing::CliRun;
using cadclip::testing::run_cadclip;

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("cadclip_config_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path file = scratch() / name;
  std::ofstream(file) << text;
  return file;
}

bool has_command(const std::string& name) {
  return run_cadclip("--help", true).output.find("\n  " + name + " ") != std::string::npos;
}

struct ConfigCase {
  const char* command;
  // Options away from their defaults, with the arguments the command requires.
  const char* options;
  // What must be given again beside --config: the required arguments.
  const char* required;
  // A key and a value of the wrong type for it.
  const char* key;
  const char* wrong_value;
};

// The command's name stands for the case in test output.
void PrintTo(const ConfigCase& c, std::ostream* out) { *out << c.command; }

const std::string kFile = CADCLIP_SOURCE_DIR "/README.md";
const std::string kFolder = CADCLIP_SOURCE_DIR "/docs";

std::string expand(std::string text) {
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"FILE", kFile},
                                    std::pair<std::string, std::string>{"FOLDER", kFolder}}) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at))
      text.replace(at, name.size(), value);
  }
  return text;
}

class ConfigTest : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(ConfigTest, PrintedOptionsReadBackToTheSameOptions) {
  const ConfigCase& c = GetParam();
  if (!has_command(c.command)) GTEST_SKIP() << c.command << " is not built in (no Open CASCADE)";
  const std::string name = c.command;
  const CliRun printed =
      run_cadclip(name + " " + expand(c.options) + " --print-config", /*with_stderr=*/false);
  ASSERT_EQ(printed.exit_code, 0)
      << run_cadclip(name + " " + expand(c.options) + " --print-config", true).output;
  ASSERT_EQ(printed.output.front(), '{') << printed.output;
  const fs::path file = write_file(name + ".json", printed.output);
  const CliRun again = run_cadclip(
      name + " " + expand(c.required) + " --config " + file.string() + " --print-config", false);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output, printed.output);
  // And the options differ from the defaults: the file carried them.
  const CliRun defaults =
      run_cadclip(name + " " + expand(c.required) + " --print-config", /*with_stderr=*/false);
  EXPECT_NE(defaults.output, printed.output);
}

TEST_P(ConfigTest, AValueOfTheWrongTypeIsAnErrorNamingItsKey) {
  const ConfigCase& c = GetParam();
  if (!has_command(c.command)) GTEST_SKIP() << c.command << " is not built in (no Open CASCADE)";
  const std::string name = c.command;
  std::string key = c.key, json = std::string("{\"") + c.key + "\": " + c.wrong_value + "}";
  if (const size_t dot = key.find('.'); dot != std::string::npos)
    json = "{\"" + key.substr(0, dot) + "\": {\"" + key.substr(dot + 1) + "\": " + c.wrong_value +
           "}}";
  const fs::path file = write_file(name + "-bad.json", json);
  const CliRun run = run_cadclip(
      name + " " + expand(c.required) + " --config " + file.string() + " --print-config", true);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("'" + key + "' has the wrong type"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("terminate"), std::string::npos) << run.output;
}

INSTANTIATE_TEST_SUITE_P(
    EveryCommand, ConfigTest,
    ::testing::Values(
        ConfigCase{"check", "FILE --quiet", "FILE", "quiet", "\"yes\""},
        ConfigCase{"embed", "\"a flange\" --pooling mean --max-length 16 --values 3", "",
                   "max_length", "\"long\""},
        ConfigCase{"eval",
                   "FILE --data FOLDER --split validation --levels abstract,expert --batch-size 8",
                   "FILE --data FOLDER", "batch_size", "[8]"},
        ConfigCase{"export", "FILE --out models --name small --fp32", "FILE --out models", "fp32",
                   "1"},
        ConfigCase{"merge", "FOLDER FOLDER --out merged --overwrite", "FOLDER FOLDER --out merged",
                   "overwrite", "\"no\""},
        ConfigCase{"train",
                   "--data P --out R --epochs 3 --loss siglip --share P=1 --validation-split \"\" "
                   "--brep-width 32 --precision bf16 --queue",
                   "", "epochs", "\"three\""},
        ConfigCase{"index", "FOLDER --out I --factory Flat --no-thumbnails --max-faces 100",
                   "FOLDER --out I", "index.batch_size", "\"big\""},
        ConfigCase{"search",
                   "FOLDER \"a flange\" -k 3 --filter \"size<100\" --strict-numbers --max-faces 10",
                   "FOLDER", "k", "\"three\""},
        ConfigCase{"serve", "FOLDER --port 0 --rate-limit 5 --trust-proxy --max-faces 10", "FOLDER",
                   "limits.max_faces", "\"many\""},
        ConfigCase{"duplicates", "FOLDER --kinds exact --min-score 0.9 --format json", "FOLDER",
                   "min_score", "\"high\""},
        ConfigCase{"synth", "--count 5 --kind mixed --family a --family b --out S", "", "count",
                   "\"five\""},
        ConfigCase{"prepare", "FILE --out P --caption-format csv --max-file-mb 5 --num-shards 2",
                   "--out P", "limits.max_file_mb", "\"big\""}),
    [](const ::testing::TestParamInfo<ConfigCase>& info) {
      return std::string(info.param.command);
    });

}  // namespace
