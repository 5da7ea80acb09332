// `ncclbot model` as a user runs it: the JSON contract, the documented Tree/LL check, exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

TEST(ModelCli, JsonListsValidArmsAndThePick) {
  const CliResult r = run_cli(
      "model --fabric h100-ib-a --collective allreduce --nodes 2 --gpus-per-node 8 --bytes 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 2 x 8 H100, no CollNet: Tree x3, Ring x3, NVLSTree/Simple (NVLS needs CollNet across nodes).
  ASSERT_EQ(j["arms"].size(), 7u);
  bool found = false;
  for (const auto& a : j["arms"]) {
    EXPECT_GT(a["time_us"].get<double>(), 0.0);
    if (a["algo"] == "Tree" && a["proto"] == "LL") {
      // 6.8 + 2 * (7 * 0.6 + 5.0) = 25.2 us latency + 128 B / (1000 * 19.5 GB/s)
      EXPECT_NEAR(a["time_us"].get<double>(), 25.2 + 128.0 / 19500.0, 1e-3);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(j["pick"]["algo"], "Tree");
  EXPECT_EQ(j["pick"]["proto"], "LL");
  EXPECT_NE(r.err.find("<- AUTO"), std::string::npos);  // the human table goes to stderr
}

TEST(ModelCli, HumanTableOnStdout) {
  const CliResult r = run_cli("model --fabric gb200-mnnvl --collective allgather --nodes 18 --bytes 1048576");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVLS"), std::string::npos);
  EXPECT_NE(r.out.find("1 node(s) x 72 ranks"), std::string::npos) << r.out;
}

TEST(ModelCli, BadInputExitsTwo) {
  CliResult r = run_cli("model --fabric nope --bytes 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown fabric"), std::string::npos);
  r = run_cli("model --fabric h100-ib-a --collective allmagic --bytes 8");
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli("model --fabric h100-ib-a --nodes 3 --gpus-per-node 9 --bytes 8");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ModelCli, SizesAndClustersOutsideTheSimulatorsRangeExitTwo) {
  // The simulator's range: 1 B to 2^40 B (1 TiB) per rank, up to 65,536 hosts.
  for (const std::string args : {"--bytes 0", "--bytes 1099511627777", "--bytes 18446744073709551615",
                                 "--nodes 65537 --bytes 8", "--nodes 100000000 --bytes 8"}) {
    const CliResult r = run_cli("model --fabric h100-ib-a " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
  }
  EXPECT_EQ(run_cli("model --fabric h100-ib-a --nodes 65536 --bytes 1099511627776").exit_code, 0);
}

}  // namespace
}  // namespace ncclbot::test
