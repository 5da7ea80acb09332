// `ncclbot bench --observation on`: the synthetic sweep takes the default preset's call dynamics,
// so the timed replays run the dynamic path (and say so); a bad value is exit code 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

TEST(BenchObservationCli, OnRunsTheDynamicPathAndSaysSo) {
  for (const char* o : {"off", "on"}) {
    const CliResult r =
        run_cli(std::string("bench --backend cpu --threads 1 --arms 6 --policy ucb1 --horizon 64 ") +
                "--contexts 4 --seeds 1 --repetitions 1 --observation " + o + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["workload"]["observation"], o);
    ASSERT_EQ(j["results"].size(), 1u);
    EXPECT_GT(j["results"][0]["steps_per_s"].get<double>(), 0.0);
  }
  const CliResult bad = run_cli("bench --observation sometimes");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--observation must be on or off"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ncclbot::test
