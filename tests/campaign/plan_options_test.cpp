// `ncclbot plan`'s numeric options: a value outside its range is one short usage line, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "support/run_cli.hpp"

namespace {

ncclbot::test::CliResult plan_with(const std::string& option) {
  const std::string out = ncclbot::test::temp_dir() + "/camp";
  return ncclbot::test::run_cli(
      "plan --fabric h100-ib-a --nodes 2 --collectives allreduce --arms Ring/Simple "
      "--max-bytes 4K --out '" +
      out + "' " + option);
}

TEST(PlanOptions, AnExplicitZeroGpusPerNodeIsRefused) {
  const auto r = plan_with("--gpus-per-node 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ncclbot: --gpus-per-node must be in [1, 1024]\n");
  EXPECT_EQ(plan_with("--gpus-per-node 1025").exit_code, 2);
  EXPECT_EQ(plan_with("--gpus-per-node 4").exit_code, 0);
}

TEST(PlanOptions, AHugeSizeIsQuotedShort) {
  const auto r = plan_with("--min-bytes " + std::string(300, '9'));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_LT(r.err.size(), 200u) << r.err;
  EXPECT_NE(r.err.find("(300 bytes) is not a size"), std::string::npos) << r.err;
}

}  // namespace
