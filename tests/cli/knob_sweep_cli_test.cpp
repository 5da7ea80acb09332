// A sweep whose arms set channels or chunk sizes, as a user meets it on the command line: inspect
// prices NCCL's default against the best arm measured; the commands that run policies refuse it
// with exit 2 and the line of its first knob arm.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

// One context. Ring/Simple with NCCL's knobs (prior 10, mean 11), Ring/Simple on 8 channels (prior 10,
// mean 8), Tree/Simple with NCCL's knobs (prior 20, mean 9). NCCL's default is the argmin of the prior
// over the arms with NCCL's own knobs: Ring/Simple (10 < 20), so it loses 11 / 8 - 1 = 0.375.
const char* kKnobSweep =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,0,8,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,1,8,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,0,10,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,1,12,10\n"
    "h100,AllReduce,2,8,1048576,Tree,Simple,0,0,0,9,20\n"
    "h100,AllReduce,2,8,1048576,Tree,Simple,0,0,1,9,20\n";

TEST(KnobSweepCli, InspectPricesNcclsDefaultAgainstTheBestKnobArm) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r = run_cli("inspect '" + dir + "/k.csv' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["contexts"], 1);
  EXPECT_EQ(j["arms"], 3);
  EXPECT_EQ(j["arms_per_context"]["max"], 3);
  EXPECT_EQ(j["knob_arms"], true);
  EXPECT_DOUBLE_EQ(j["auto"]["mean"].get<double>(), 0.375);
  EXPECT_EQ(j["auto"]["above_10pct"], 1);
  EXPECT_NE(r.err.find("NCCL's default"), std::string::npos) << r.err;
}

TEST(KnobSweepCli, ReplayRefusesAKnobSweepAtItsFirstKnobArm) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r = run_cli("replay --sweep '" + dir + "/k.csv' --policy ucb1 --seeds 1 --horizon 10");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/k.csv:2: this arm sets channels or a chunk size"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ncclbot::test
