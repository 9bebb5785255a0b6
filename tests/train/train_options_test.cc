// TrainOptions as JSON: what options.json holds is what --config reads back.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../error_of.h"
#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/train/trainer.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

fs::path write_config(const std::string& name, const std::string& text) {
  const fs::path file = fs::temp_directory_path() / ("cadclip-train-options-" + name + ".json");
  write_text_atomic(file, text);
  return file;
}

std::string error_of(const fs::path& file) {
  return testing::error_of([&] { read_train_options(file); });
}

TEST(TrainOptionsTest, WhatOptionsJsonHoldsReadsBackToTheSameOptions) {
  TrainOptions o;
  o.data = {"prepared", "more.txt"};
  o.out = "run";
  o.epochs = 3;
  o.loss = LossKind::kSigLip;
  o.validation_split = std::nullopt;
  o.levels = {"abstract", "expert"};
  o.model.brep.width = 32;
  o.model.two_tower.text_precision = c10::kBFloat16;
  o.model.two_tower.quantity_width = 0;
  o.model.text_folder = "text";
  o.model.text.max_length = 64;
  const nlohmann::json written = o;
  EXPECT_EQ(written.at("loss"), "siglip");
  EXPECT_TRUE(written.at("validation_split").is_null());
  EXPECT_EQ(written.at("model").at("two_tower").at("text_precision"), "bf16");
  EXPECT_EQ(written.at("model").at("text").at("folder"), "text");
  const TrainOptions back = read_train_options(write_config("round", written.dump(2)));
  EXPECT_EQ(nlohmann::json(back), written);
}

TEST(TrainOptionsTest, AnOptionsJsonNamingOneDataFolderReadsAsAListOfOne) {
  const TrainOptions o =
      read_train_options(write_config("one_folder", R"({"data": "prepared", "epochs": 2})"));
  EXPECT_EQ(o.data, std::vector<std::string>{"prepared"});
  EXPECT_EQ(o.epochs, 2);
}

TEST(TrainOptionsTest, AbsentKeysKeepTheGivenValues) {
  TrainOptions given;
  given.model.text_folder = "/models/minilm";
  const TrainOptions o = read_train_options(
      write_config("partial", R"({"epochs": 2, "model": {"brep": {"layers": 3}}})"), given);
  EXPECT_EQ(o.epochs, 2);
  EXPECT_EQ(o.model.brep.layers, 3);
  EXPECT_EQ(o.model.brep.width, TrainOptions{}.model.brep.width);
  EXPECT_EQ(o.model.text_folder, "/models/minilm");
  EXPECT_EQ(o.model.text.max_length, 128);  // the training default, not the model's 0
  EXPECT_EQ(o.model.two_tower.text_head_hidden, 512);
  EXPECT_EQ(o.validation_split, data::Split::kValidation);
}

TEST(TrainOptionsTest, UnknownKeysAndWrongTypesAreRefusedByName) {
  EXPECT_NE(error_of(write_config("unknown", R"({"model": {"brep": {"widht": 3}}})"))
                .find("unknown option(s) model.brep.widht"),
            std::string::npos);
  EXPECT_NE(error_of(write_config("type", R"({"model": {"brep": {"width": "wide"}}})"))
                .find("'model.brep.width' has the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of(write_config("loss", R"({"loss": "triplet"})"))
                .find("loss 'triplet' is not infonce or siglip"),
            std::string::npos);
  EXPECT_NE(error_of(write_config("split", R"({"validation_split": "dev"})"))
                .find("split 'dev' is not train, validation or test"),
            std::string::npos);
  EXPECT_NE(error_of(write_config("json", "{broken")).find("is not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace cadclip::train
