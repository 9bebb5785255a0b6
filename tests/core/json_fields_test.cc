// One description of an options struct's fields: the JSON form both ways,
// each field's help, and a --config file read into the struct.
#include "cadclip/core/json_fields.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"

namespace cadclip {
namespace {

struct Limits {
  int max_faces = 5000;
};
CADCLIP_OPTION_FIELDS(Limits, (max_faces, "Faces at most"))

struct Inner {
  std::string unit = "mm";
};

struct JobOptions {
  std::string out;
  std::map<std::string, double> shares;
  Limits limits;
  Inner inner;
};
CADCLIP_OPTION_FIELDS(JobOptions, (out, "Folder to write"), (shares, "Share per source"),
                      (limits, "What one file may cost"),
                      (assume_unit, inner.unit, "Unit of unitless files"))

std::filesystem::path write_config(const std::string& name, const std::string& text) {
  const auto file = std::filesystem::temp_directory_path() / ("cadclip-json-fields-" + name);
  write_text_atomic(file, text);
  return file;
}

std::string error_of(const std::string& name, const std::string& text) {
  JobOptions options;
  try {
    read_options_file(write_config(name, text), options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonFieldsTest, AFieldIsWrittenUnderItsKeyAndAMemberOfAMemberUnderTheKeyNamed) {
  JobOptions o;
  o.out = "run";
  o.inner.unit = "inch";
  const nlohmann::json json = o;
  EXPECT_EQ(json.at("out"), "run");
  EXPECT_EQ(json.at("limits").at("max_faces"), 5000);
  EXPECT_EQ(json.at("assume_unit"), "inch");
  EXPECT_FALSE(json.contains("inner"));
}

TEST(JsonFieldsTest, EachFieldHasTheHelpOfItsDescriptionFoundByItsAddress) {
  const JobOptions o;
  EXPECT_EQ(field_help(o, &o.out), "Folder to write");
  EXPECT_EQ(field_help(o, &o.inner.unit), "Unit of unitless files");
  EXPECT_EQ(field_help(o.limits, &o.limits.max_faces), "Faces at most");
  const int elsewhere = 0;
  EXPECT_TRUE(field_help(o, &elsewhere).empty());
}

TEST(JsonFieldsTest, AConfigFileFillsTheGivenKeysAndKeepsTheRest) {
  JobOptions o;
  o.out = "kept";
  read_options_file(
      write_config("partial.json",
                   R"({"assume_unit": "m", "limits": {"max_faces": 7}, "shares": {"real": 0.3}})"),
      o);
  EXPECT_EQ(o.out, "kept");
  EXPECT_EQ(o.inner.unit, "m");
  EXPECT_EQ(o.limits.max_faces, 7);
  EXPECT_EQ(o.shares.at("real"), 0.3);
}

TEST(JsonFieldsTest, AConfigFileWithAnUnknownKeyOrAWrongTypeIsRefusedByName) {
  EXPECT_NE(error_of("unknown.json", R"({"limits": {"max_face": 7}})")
                .find("unknown option(s) limits.max_face"),
            std::string::npos);
  EXPECT_NE(error_of("type.json", R"({"limits": {"max_faces": "many"}})")
                .find("'limits.max_faces' has the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of("top.json", R"({"assume_unit": 3})").find("'assume_unit' has the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of("broken.json", "{broken").find("is not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace cadclip
