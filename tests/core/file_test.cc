#include "cadclip/core/file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "cadclip/core/error.h"

namespace cadclip {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("cadclip_file_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(AtomicWriteTest, WritesAndReplaces) {
  const auto dir = fresh_dir("replace");
  write_text_atomic(dir / "a.txt", "first");
  EXPECT_EQ(read_text_file(dir / "a.txt"), "first");
  write_text_atomic(dir / "a.txt", "second");
  EXPECT_EQ(read_text_file(dir / "a.txt"), "second");
  // No temporary files are left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

TEST(AtomicWriteTest, AFailingWriterLeavesTheOldFile) {
  const auto dir = fresh_dir("throw");
  write_text_atomic(dir / "a.txt", "old");
  EXPECT_THROW(write_file_atomic(dir / "a.txt",
                                 [](std::FILE* out) {
                                   std::fputs("half of the new", out);
                                   throw Error("disk full");
                                 }),
               Error);
  EXPECT_EQ(read_text_file(dir / "a.txt"), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

TEST(AtomicWriteTest, AProcessKilledMidWriteLeavesTheOldFile) {
  const auto dir = fresh_dir("crash");
  write_text_atomic(dir / "a.txt", "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    write_file_atomic(dir / "a.txt", [](std::FILE* out) {
      std::fputs("half of the new", out);
      std::fflush(out);
      ::_exit(3);  // dies in the middle of the write, as a crash would
    });
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(read_text_file(dir / "a.txt"), "old");
}

TEST(ReadTextFileTest, MissingFileNamesThePath) {
  try {
    read_text_file("/nonexistent/cadclip.txt");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cadclip.txt"), std::string::npos);
  }
}

TEST(ScratchDirTest, RemovesItsFolderUnlessReleased) {
  const auto dir = fresh_dir("scratch");
  {
    ScratchDir scratch(dir / "a" / "b");
    ASSERT_TRUE(std::filesystem::is_directory(dir / "a" / "b"));
    write_text_atomic(scratch.path() / "sub" / "x.txt", "scratch");
    ScratchDir moved = std::move(scratch);
    EXPECT_TRUE(scratch.path().empty());
    EXPECT_EQ(moved.path(), dir / "a" / "b");
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "a" / "b"));  // with what it held
  EXPECT_TRUE(std::filesystem::exists(dir / "a"));         // its parents stay
  {
    ScratchDir kept(dir / "kept");
    kept.release();
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir / "kept"));
  {
    ScratchDir first(dir / "first");
    first = ScratchDir(dir / "second");  // the folder it held goes at once
    EXPECT_FALSE(std::filesystem::exists(dir / "first"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "second"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cadclip
