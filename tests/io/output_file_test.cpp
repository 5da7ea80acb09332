// The shared output rules: atomic writes that leave nothing behind on failure, outputs that may
// not alias inputs, unwritable outputs and oversized inputs reported as errors naming the path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "support/run_cli.hpp"

namespace ncclbot {
namespace {

namespace fs = std::filesystem;

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, SameFileSeesThroughSpellingsAndLinks) {
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/a.csv", "x");
  fs::create_directories(dir + "/sub");
  fs::create_symlink(dir + "/a.csv", dir + "/link.csv");
  EXPECT_TRUE(same_file(dir + "/a.csv", dir + "/sub/../a.csv"));
  EXPECT_TRUE(same_file(dir + "/a.csv", dir + "/./a.csv"));
  EXPECT_TRUE(same_file(dir + "/link.csv", dir + "/a.csv"));
  EXPECT_FALSE(same_file(dir + "/a.csv", dir + "/b.csv"));
  EXPECT_TRUE(same_file(dir + "/new.csv", dir + "/sub/../new.csv"));  // neither exists yet
  try {
    check_output_not_input(dir + "/sub/../a.csv", {dir + "/other.csv", dir + "/a.csv"}, "--raw");
    FAIL() << "an output naming an input was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--raw"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_output_not_input(dir + "/b.csv", {dir + "/a.csv"}, "--raw"));
}

TEST(OutputFile, StreamIsInvisibleUntilCommitAndRemovedWithoutIt) {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/raw.csv";
  {
    OutputFile out(path, "--raw");
    out.stream() << "a,b\n1,2\n";
    EXPECT_FALSE(fs::exists(path));  // a killed run would leave no raw.csv at all
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(entries(dir), 0u);  // and the abandoned temporary is gone
  {
    OutputFile out(path, "--raw");
    out.stream() << "a,b\n1,2\n";
    out.commit();
  }
  EXPECT_EQ(test::read_all(path), "a,b\n1,2\n");
  EXPECT_EQ(entries(dir), 1u);
}

TEST(OutputFile, UnwritableOutputsNameThePath) {
  const std::string dir = test::temp_dir();
  const std::string missing = dir + "/no/such/folder/x.csv";
  try {
    write_output_file(missing, "x", "--out");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(OutputFile(dir, "--raw"), UsageError);  // a folder is not a file
  test::write_file(dir + "/keep.txt", "mine");
  write_output_file(dir + "/keep.txt", "new", "--out");
  EXPECT_EQ(test::read_all(dir + "/keep.txt"), "new");
  EXPECT_EQ(entries(dir), 1u);
}

TEST(OutputFile, DevicesAreWrittenInPlaceAndLinksKept) {
  write_output_file("/dev/null", "discarded", "--out");
  {
    OutputFile out("/dev/null", "--raw");
    out.stream() << "discarded\n";
    out.commit();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));  // not replaced by a regular file
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/target.csv", "old");
  fs::create_symlink(dir + "/target.csv", dir + "/link.csv");
  write_output_file(dir + "/link.csv", "new", "--out");
  EXPECT_TRUE(fs::is_symlink(dir + "/link.csv"));
  EXPECT_EQ(test::read_all(dir + "/target.csv"), "new");
}

TEST(OutputFile, ReadersHaveASizeCap) {
  EXPECT_THROW(read_input_file("/dev/zero", 1 << 20), InputError);
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/big.txt", std::string(5000, 'x'));
  EXPECT_THROW(read_input_file(dir + "/big.txt", 4096), InputError);
  EXPECT_EQ(read_input_file(dir + "/big.txt", 5000).size(), 5000u);
  EXPECT_THROW(read_input_file(dir, 4096), InputError);
  EXPECT_FALSE(read_input_file_if_exists(dir + "/missing", 10).has_value());
}

}  // namespace
}  // namespace ncclbot
