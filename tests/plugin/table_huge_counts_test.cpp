// A count column of a decision table (nodes, gpus_per_node, nRanks, channels, ...) holds an int
// (NCCL's nNodes, nRanks, nChannels are ints), so 2^64 - 1 or 2^31 is no count: the table is refused
// with file:line and the communicator runs on NCCL's choices, in both formats. 2^64 - 1 once read
// as "any" and matched every communicator.
#include <gtest/gtest.h>

#include <string>

#include "plugin/table_mode_comm.hpp"
#include "support/run_cli.hpp"

namespace {

constexpr int kTreeLl = 0;  // two_arms()'s cheaper arm: NCCL's own pick

// The table `text` is refused for a communicator of 8 ranks on 2 nodes: a WARN naming
// `path:line: needle`, and NCCL's pick and channel count stand.
void expect_huge_count_refused(const std::string& text, const std::string& where_and_why) {
  const std::string path = ncclbot::test::temp_dir() + "/huge_count.csv";
  ncclbot::test::write_file(path, text);
  ncclbot::test::TableModeComm comm(path, 8, 2);
  EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, path + where_and_why)) << text;
  int nch = 0;
  EXPECT_EQ(comm.all_reduce(4096, &nch), kTreeLl) << text;
  EXPECT_EQ(nch, 0) << text;
}

const char* const kHugeHeader =
    "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n";

}  // namespace

TEST(TableHugeCounts, TwoToTheSixtyFourMinusOneIsRefusedInTheNcclbotFormat) {
  const std::string h = kHugeHeader;
  expect_huge_count_refused(h + "*,allreduce,*,*,0,*,Ring,Simple,18446744073709551615\n",
                            ":2: bad channels '18446744073709551615'");
  expect_huge_count_refused(h + "*,allreduce,18446744073709551615,*,0,*,Ring,Simple\n",
                            ":2: bad nodes '18446744073709551615'");
  expect_huge_count_refused(h + "*,allreduce,*,18446744073709551615,0,*,Ring,Simple\n",
                            ":2: bad gpus_per_node '18446744073709551615'");
  // 2^31: one past INT_MAX, which an int would wrap.
  expect_huge_count_refused(h + "*,allreduce,2147483648,*,0,*,Ring,Simple\n", ":2: bad nodes '2147483648'");
}

TEST(TableHugeCounts, TwoToTheSixtyFourMinusOneIsRefusedInNcclsExampleFormat) {
  expect_huge_count_refused("allreduce,0,-1,ring,simple,18446744073709551615,-1,-1\n",
                            ":1: bad channels '18446744073709551615'");
  expect_huge_count_refused("allreduce,0,-1,ring,simple,8,18446744073709551615,-1\n",
                            ":1: bad nNodes '18446744073709551615'");
  expect_huge_count_refused("allreduce,0,-1,ring,simple,8,-1,18446744073709551615\n",
                            ":1: bad nRanks '18446744073709551615'");
  expect_huge_count_refused("allreduce,0,-1,ring,simple,8,-1,-1,18446744073709551615\n",
                            ":1: bad numPipeOps '18446744073709551615'");
}

// The largest byte bound is a bound, not a count: max_bytes 2^64 - 1 is every size, as before.
TEST(TableHugeCounts, AMaxBytesOfTwoToTheSixtyFourMinusOneStaysEverySize) {
  const std::string path = ncclbot::test::temp_dir() + "/huge_max_bytes.csv";
  ncclbot::test::write_file(
      path, std::string(kHugeHeader) + "*,allreduce,2,4,0,18446744073709551615,Ring,Simple,8\n");
  ncclbot::test::TableModeComm comm(path, 8, 2);
  EXPECT_FALSE(ncclbot::test::logged(kNcclLogWarn, path));
  int nch = 0;
  EXPECT_EQ(comm.all_reduce(1 << 30, &nch), 1 * 3 + 2);  // Ring/Simple
  EXPECT_EQ(nch, 8);
}
