// Loss vs horizon in a study (docs/study.md "Loss vs horizon"): with every score context and the
// study's own seeds, the curve's point at the study's horizon is the unit's scored mean online loss,
// bit for bit, as deployed or not; the report has the table and says which world it shows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"
#include "support/same_bits.hpp"

namespace ncclbot::test {
namespace {

std::string curve_study(const std::string& world) {
  return "[study]\nname = \"t\"\nseeds = 3\nhorizon = 300\nbackend = \"cpu\"\nbootstrap_resamples = 100\n"
         "permutation_resamples = 100\nloss_vs_horizon = [40, 300, 700]\nloss_vs_horizon_contexts = 1000\n"
         "loss_vs_horizon_seeds = 3\n" +
         world +
         "[[sweep]]\nname = \"x\"\npreset = \"h100-ib-a\"\nnodes = [2, 4]\ncollectives = [\"allreduce\"]\n"
         "samples = 3\n[[scenario]]\nname = \"s\"\ntune = { sweep = \"x\", nodes = [2] }\n"
         "score = { sweep = \"x\", nodes = [4] }\n[[policy]]\nname = \"A\"\nspec = \"auto\"\n[[policy]]\n"
         "name = \"U\"\nspec = \"ucb1:c=0.2,n0=0\"\n";
}

}  // namespace

TEST(LossVsHorizon, ThePointAtTheStudysHorizonIsTheScoredMean) {
  for (const std::string world : {"", "as_deployed = \"ideal\"\n"}) {
    const std::string base = temp_dir();
    write_file(base + "/study.toml", curve_study(world));
    const CliResult r = run_cli("run '" + base + "/study.toml' --out '" + base + "/out' --no-figures");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json res = nlohmann::json::parse(read_all(base + "/out/results.json"));
    ASSERT_EQ(res["scores"].size(), 2u);
    for (const auto& s : res["scores"]) {
      const auto& curve = s["loss_vs_horizon"];
      ASSERT_EQ(curve.size(), 3u);
      EXPECT_EQ(curve[1]["horizon"], 300);
      double sum = 0.0;
      for (const auto& v : s["online"]) sum += v.get<double>();
      const double mean = sum / double(s["online"].size());
      EXPECT_TRUE(same_bits(curve[1]["mean_online"].get<double>(), mean))
          << s["policy"] << " " << curve[1]["mean_online"] << " vs " << mean << " (" << world << ")";
    }
    // A learner pays less per call the longer it runs; AUTO does not learn.
    const auto& ucb = res["scores"][1]["loss_vs_horizon"];
    EXPECT_GT(ucb[0]["mean_online"].get<double>(), ucb[2]["mean_online"].get<double>());
    const std::string md = read_all(base + "/out/report.md");
    EXPECT_NE(md.find("## Loss vs horizon"), std::string::npos);
    EXPECT_NE(md.find(world.empty() ? "scored as deployed (leader mode)" : "scored in the ideal world"),
              std::string::npos);
  }
}

}  // namespace ncclbot::test
