// `ncclbot inspect` as a user runs it: the JSON contract (docs/architecture.md "Contracts") and exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Two contexts, priors chosen so AUTO is right on one and 50% off on the other:
//  ctx 1 node : Ring/LL mean 10, Tree/LL mean 20; prior prefers Ring/LL -> loss 0
//  ctx 16 node: Ring/LL mean 30, Tree/LL mean 20; prior prefers Ring/LL -> loss 30/20-1 = 0.5
const char* kInspectSweep =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
    "f,allreduce,1,8,1024,Ring,LL,0,9,5\n"
    "f,allreduce,1,8,1024,Ring,LL,1,11,5\n"
    "f,allreduce,1,8,1024,Tree,LL,0,20,6\n"
    "f,allreduce,1,8,1024,Tree,LL,1,20,6\n"
    "f,allgather,16,8,1024,Ring,LL,0,30,5\n"
    "f,allgather,16,8,1024,Ring,LL,1,30,5\n"
    "f,allgather,16,8,1024,Tree,LL,0,19,6\n"
    "f,allgather,16,8,1024,Tree,LL,1,21,6\n";

}  // namespace

TEST(InspectCli, JsonContract) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kInspectSweep);
  const auto r = run_cli("inspect '" + dir + "/s.csv' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["contexts"], 2);
  EXPECT_EQ(j["arms"], 2);
  EXPECT_EQ(j["samples"], 2);
  EXPECT_DOUBLE_EQ(j["auto"]["mean"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["auto"]["max"].get<double>(), 0.5);
  // linear percentile of {0, 0.5} at 99%: 0 + 0.99 * 0.5
  EXPECT_DOUBLE_EQ(j["auto"]["p99"].get<double>(), 0.495);
  EXPECT_EQ(j["auto"]["above_10pct"], 1);

  const auto f = run_cli("inspect '" + dir + "/s.csv' --nodes 16 --collectives allgather --json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto jf = nlohmann::json::parse(f.out);
  EXPECT_EQ(jf["contexts"], 1);
  EXPECT_DOUBLE_EQ(jf["auto"]["mean"].get<double>(), 0.5);
}

TEST(InspectCli, BadInputExitsTwoWithFileAndLine) {
  const std::string dir = temp_dir();
  write_file(dir + "/bad.csv", std::string(kInspectSweep) + "f,allreduce,1,8,1024,Ring,LL,0,-1,5\n");
  const auto r = run_cli("inspect '" + dir + "/bad.csv'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.csv:10: time_us must be positive"), std::string::npos) << r.err;

  const auto missing = run_cli("inspect '" + dir + "/none.csv'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.csv: cannot open: no such file"), std::string::npos);

  const auto usage = run_cli("inspect '" + dir + "/bad.csv' --nodes x");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--nodes: 'x' is not a positive node count"), std::string::npos) << usage.err;

  const auto unknown = run_cli("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
}
