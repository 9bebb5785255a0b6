#include "cadclip/data/captions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "test_graphs.h"

namespace cadclip::data {
namespace {

const std::filesystem::path kFixtures = "tests/fixtures/captions";

std::vector<int64_t> problem_lines(const CaptionFile& file) {
  std::vector<int64_t> lines;
  for (const auto& p : file.problems) lines.push_back(p.line);
  return lines;
}

std::string reason_at(const CaptionFile& file, int64_t line) {
  for (const auto& p : file.problems)
    if (p.line == line) return p.reason;
  return "";
}

TEST(Captions, Text2CadCsvKeepsGoodRowsAndReportsBrokenOnes) {
  const CaptionFile file = read_captions(kFixtures / "text2cad_broken.csv", {});
  EXPECT_EQ(file.format, "text2cad");
  EXPECT_EQ(file.rows, 11);
  EXPECT_EQ(file.empty, 3);
  EXPECT_EQ(problem_lines(file), (std::vector<int64_t>{4, 7, 8, 9, 10, 12}));
  EXPECT_NE(reason_at(file, 4).find("3 fields"), std::string::npos);
  EXPECT_NE(reason_at(file, 7).find("quote"), std::string::npos);
  EXPECT_NE(reason_at(file, 8).find("UTF-8"), std::string::npos);
  EXPECT_NE(reason_at(file, 8).find("abstract"), std::string::npos);
  EXPECT_NE(reason_at(file, 9).find("UTF-8"), std::string::npos);
  EXPECT_NE(reason_at(file, 10).find("closing quote"), std::string::npos);
  EXPECT_NE(reason_at(file, 12).find("never closed"), std::string::npos);
  ASSERT_EQ(file.captions.size(), 20u);

  const Caption& first = file.captions[0];
  EXPECT_EQ(first.id, "0000/00000007");
  EXPECT_EQ(first.level, "abstract");
  EXPECT_EQ(first.text, "A plate, with a hole.");
  EXPECT_EQ(file.captions[2].text, "A 10 x 10 plate with \"one\" hole");
  EXPECT_EQ(file.captions[3].level, "expert");
  EXPECT_EQ(file.captions[4].id, "0000/00000008");
  EXPECT_EQ(file.captions[5].text, "multi\nline abstract");
  // Row 8 lost only its non-UTF-8 abstract.
  EXPECT_EQ(file.captions[9].id, "0000/00000012");
  EXPECT_EQ(file.captions[9].level, "beginner");
  // The unterminated quote on line 12 did not swallow line 13, whose CRLF is gone.
  EXPECT_EQ(file.captions.back().id, "0000/00000016");
  EXPECT_EQ(file.captions.back().text, "e");
  EXPECT_EQ(file.captions[file.captions.size() - 4].text, "Last one.");
}

TEST(Captions, ADuplicateUidAndNulBytesAreReportedNotTaken) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                       ("cadclip_captions_dup_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::string nul(1, '\0');
  write_text_atomic(folder / "dup.csv",
                    "uid,abstract,beginner\n"
                    "0000/1,A plate.,A flat plate.\n"
                    "0000/2,A ring.,A thin ring.\n"
                    "0000/1,Another plate.,Not the same.\n"
                    "0000/3,A nul" +
                        nul + "byte.,Fine.\n");
  const CaptionFile file = read_captions(folder / "dup.csv", {});
  EXPECT_EQ(file.format, "text2cad");
  EXPECT_EQ(problem_lines(file), (std::vector<int64_t>{4, 5}));
  EXPECT_NE(reason_at(file, 4).find("uid '0000/1' was already on line 2"), std::string::npos)
      << reason_at(file, 4);
  EXPECT_NE(reason_at(file, 5).find("NUL"), std::string::npos) << reason_at(file, 5);
  // 0000/1 twice, 0000/2 twice, and 0000/3's beginner caption.
  ASSERT_EQ(file.captions.size(), 5u);
  EXPECT_EQ(file.captions[0].text, "A plate.");
  EXPECT_EQ(file.captions.back().text, "Fine.");

  write_text_atomic(
      folder / "nul.jsonl",
      "{\"id\": \"a\", \"text\": \"fine\"}\n{\"id\": \"b\", \"text\": \"bad\\u0000\"}\n");
  const CaptionFile lines = read_captions(folder / "nul.jsonl", {});
  EXPECT_EQ(problem_lines(lines), (std::vector<int64_t>{2}));
  EXPECT_EQ(lines.captions.size(), 1u);
  std::filesystem::remove_all(folder);
}

TEST(Captions, JsonlKeepsGoodLinesAndReportsBrokenOnes) {
  const CaptionFile file = read_captions(kFixtures / "captions_broken.jsonl", {});
  EXPECT_EQ(file.format, "jsonl");
  EXPECT_EQ(file.rows, 8);
  EXPECT_EQ(file.empty, 1);
  EXPECT_EQ(problem_lines(file), (std::vector<int64_t>{3, 4, 6, 9}));
  EXPECT_NE(reason_at(file, 4).find("UTF-8"), std::string::npos);
  EXPECT_NE(reason_at(file, 6).find("id"), std::string::npos);
  ASSERT_EQ(file.captions.size(), 3u);
  EXPECT_EQ(file.captions[1].level, "caption");  // no "level": the option's default
  EXPECT_EQ(file.captions[2].id, "c");
  EXPECT_EQ(file.captions[2].text, "Draw a circle.");
}

TEST(Captions, CsvWithNamedColumns) {
  CaptionOptions options;
  options.id_column = "name";
  options.text_column = "description";
  options.level_column = "kind";
  const CaptionFile file = read_captions(kFixtures / "parts.csv", options);
  EXPECT_EQ(file.format, "csv");
  ASSERT_EQ(file.captions.size(), 2u);
  EXPECT_EQ(file.captions[0].id, "bracket_01");
  EXPECT_EQ(file.captions[0].text, "An L-shaped bracket, 40 mm.");
  EXPECT_EQ(file.captions[1].level, "beginner");
  EXPECT_EQ(problem_lines(file), (std::vector<int64_t>{5}));
  EXPECT_EQ(file.empty, 1);

  options.level_column.clear();
  options.level = "abstract";
  const CaptionFile fixed = read_captions(kFixtures / "parts.csv", options);
  ASSERT_EQ(fixed.captions.size(), 2u);
  EXPECT_EQ(fixed.captions[1].level, "abstract");
}

TEST(Captions, AMissingColumnIsAnErrorThatListsTheColumns) {
  CaptionOptions options;
  options.id_column = "part";
  try {
    read_captions(kFixtures / "parts.csv", options);
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'part'"), std::string::npos);
    EXPECT_NE(message.find("name, description, kind"), std::string::npos);
  }
  EXPECT_THROW(read_captions(kFixtures / "missing.csv", {}), Error);
  EXPECT_THROW(read_captions(kFixtures / "README.md", {}), Error);  // unknown extension
}

TEST(Captions, WrittenJsonlReadsBackTheSame) {
  testing::ScratchDir dir("captions-jsonl");
  const std::vector<Caption> captions = {{"0070/00702684", "abstract", "A \"quoted\" plate."},
                                         {"x", "expert", "Line one\nline two, ünïcode"}};
  write_captions_jsonl(dir.path() / "captions.jsonl", captions);
  const CaptionFile back = read_captions(dir.path() / "captions.jsonl", {});
  ASSERT_EQ(back.captions.size(), 2u);
  EXPECT_TRUE(back.problems.empty());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.captions[i].id, captions[i].id);
    EXPECT_EQ(back.captions[i].level, captions[i].level);
    EXPECT_EQ(back.captions[i].text, captions[i].text);
  }
}

TEST(Captions, FactsAreKeptInCanonicalFormAndWrittenBack) {
  testing::ScratchDir dir("captions-facts");
  // synth's line format; keys in another order and spacing must give the same facts.
  write_text_atomic(dir.path() / "in.jsonl",
                    R"({"facts":{"width":80,"family":"plate","hole_count":6},"id":"a",)"
                    R"("level":"abstract","noise":null,"text":"A plate."})"
                    "\n"
                    R"({"id":"b","level":"abstract","text":"A 80 mm plate with 6 holes.",)"
                    R"( "facts": {"hole_count": 6, "family": "plate", "width": 80}})"
                    "\n"
                    R"({"id":"c","text":"No facts here."})"
                    "\n"
                    R"({"id":"d","text":"Bad facts.","facts":[1,2]})"
                    "\n");
  const CaptionFile file = read_captions(dir.path() / "in.jsonl", {});
  ASSERT_EQ(file.captions.size(), 3u);
  EXPECT_EQ(problem_lines(file), std::vector<int64_t>{4});
  EXPECT_EQ(reason_at(file, 4), "\"facts\" is not an object");
  EXPECT_EQ(file.captions[0].facts, R"({"family":"plate","hole_count":6,"width":80})");
  EXPECT_EQ(file.captions[1].facts, file.captions[0].facts);
  EXPECT_EQ(file.captions[2].facts, "");

  write_captions_jsonl(dir.path() / "out.jsonl", file.captions);
  const CaptionFile back = read_captions(dir.path() / "out.jsonl", {});
  ASSERT_EQ(back.captions.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back.captions[i].facts, file.captions[i].facts);
  const std::string written = read_text_file(dir.path() / "out.jsonl");
  EXPECT_NE(written.find(R"("facts":{"family":"plate","hole_count":6,"width":80})"),
            std::string::npos)
      << written;
  EXPECT_EQ(written.find(R"("id":"c","level":"caption","text":"No facts here.","facts")"),
            std::string::npos)
      << "a caption without facts gets no facts key: " << written;
}

}  // namespace
}  // namespace cadclip::data
