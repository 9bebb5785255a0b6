// The cadclip command line as a user meets it: help, version, and clear
// errors with a non-zero exit for unknown commands and flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cadclip/core/safetensors.h"
#include "cli_run.h"

namespace {

using cadclip::testing::CliRun;
using cadclip::testing::run_cadclip;

TEST(CliTest, HelpListsTheSubcommands) {
  const CliRun run = run_cadclip("--help");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Subcommands:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("check"), std::string::npos) << run.output;
}

TEST(CliTest, VersionNamesCadclipAndLibTorch) {
  const CliRun run = run_cadclip("--version");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("cadclip 0."), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("LibTorch 2."), std::string::npos) << run.output;
}

TEST(CliTest, SubcommandHelp) {
  const CliRun run = run_cadclip("check --help");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Usage: cadclip check"), std::string::npos) << run.output;
}

TEST(CliTest, ABadTrainConfigFileIsAClearErrorNamingTheKey) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "cadclip-cli-bad-config.json";
  std::ofstream(file) << R"({"epochs": 2, "model": {"brep": {"widht": 3}}})";
  const CliRun run = run_cadclip("train --config " + file.string() + " --out /nonexistent/run");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("unknown option(s) model.brep.widht"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("terminate"), std::string::npos) << run.output;
}

TEST(CliTest, UnknownSubcommandIsAClearError) {
  const CliRun run = run_cadclip("trian");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("unknown command 'trian'"), std::string::npos) << run.output;
}

TEST(CliTest, UnknownFlagIsAClearError) {
  CliRun run = run_cadclip("--frobnicate");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--frobnicate"), std::string::npos) << run.output;
  run = run_cadclip("check --frobnicate " CADCLIP_SOURCE_DIR "/README.md");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--frobnicate"), std::string::npos) << run.output;
}

TEST(CliTest, BadLogLevelIsAClearError) {
  CliRun run = run_cadclip("--log-level loud --help");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  run = run_cadclip("--log-level loud check x");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("loud"), std::string::npos) << run.output;
}

TEST(CliTest, CheckReportsHealthyAndSickFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cadclip_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<float> good = {1, 2}, sick = {1, std::numeric_limits<float>::quiet_NaN()};
  cadclip::SafetensorsWriter healthy;
  healthy.add_f32("w", {2}, good);
  healthy.write(dir / "healthy.safetensors");
  cadclip::SafetensorsWriter ill;
  ill.add_f32("w", {2}, good);
  ill.add_f32("head.bias", {2}, sick);
  ill.write(dir / "sick.safetensors");
  std::ofstream(dir / "junk.safetensors") << "not a tensor file at all";

  CliRun run = run_cadclip("check " + (dir / "healthy.safetensors").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("healthy"), std::string::npos) << run.output;
  run = run_cadclip("check " + (dir / "sick.safetensors").string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("SICK: head.bias (1 NaN)"), std::string::npos) << run.output;
  run = run_cadclip("check " + (dir / "junk.safetensors").string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("not a valid safetensors file"), std::string::npos) << run.output;
}

}  // namespace
