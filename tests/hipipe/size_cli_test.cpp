// `hipipe --bytes` and a study's sizes above 1 TiB per rank are refused with one line (exit 2), and
// the chunk plan shows every chunk in a unit that shows it (a 1 KiB chunk is not "0.001 MiB").
#include <gtest/gtest.h>

#include <string>

#include "support/run_cli.hpp"

namespace ncclbot {
namespace {

TEST(HipipeSizeCli, AboveOneTiBIsOneLineAndExitTwo) {
  for (const char* bytes : {"1025G", "2T", "1048576T"}) {
    const auto r = test::run_cli(std::string("hipipe --fabric gb200-mnnvl --bytes ") + bytes);
    EXPECT_EQ(r.exit_code, 2) << bytes << "\n" << r.err;
    EXPECT_EQ(test::count_of(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find(std::string("--bytes ") + bytes + ": above"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 TiB"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/study.toml",
                   "sizes = [\"1G\",\n  \"2T\"]\n[[topology]]\nfabric = \"h100-ib-a\"\n");
  const auto r = test::run_cli("hipipe --study '" + dir + "/study.toml' --out '" + dir + "/out' --no-figure");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("study.toml:2: size 2199023255552 B: above"), std::string::npos) << r.err;
}

TEST(HipipeSizeCli, ChunkPlanShowsEachChunkInItsUnit) {
  // One chunk of 1024 B: below the pipelining threshold, HiPIPE keeps the message whole.
  const auto small = test::run_cli("hipipe --fabric h100-ib-a --bytes 1K");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_NE(small.out.find("hipipe chunk plan: 1 KiB\n"), std::string::npos) << small.out;
  // The largest size: no chunk prints as zero.
  const auto large = test::run_cli("hipipe --fabric h100-ib-a --bytes 1T");
  ASSERT_EQ(large.exit_code, 0) << large.err;
  const std::string plan = large.out.substr(large.out.find("hipipe chunk plan:"));
  EXPECT_EQ(plan.find(" 0 "), std::string::npos) << plan;
  EXPECT_EQ(plan.find("0.000"), std::string::npos) << plan;
  EXPECT_NE(plan.find(" GiB"), std::string::npos) << plan;
}

}  // namespace
}  // namespace ncclbot
