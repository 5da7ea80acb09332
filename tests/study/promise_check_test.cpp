// A study checks the conservative promise (study.promise_seeds): every policy run @conservative gets
// the count of replays and seeds that broke its budget on evenly spaced score contexts, the same
// count replay/budget_check.hpp gives for those contexts, seeds and horizon; the report shows it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

TEST(PromiseCheck, AStudyCountsTheBreaksOfEachConservativePolicy) {
  const std::string dir = temp_dir() + "/promise_study";
  const CliResult synth = run_cli(
      "synth --fabric h100-ib-a --seed 9 --nodes 2 --collectives allreduce --samples 3 "
      "--out '" +
      dir + "-sweep.csv'");
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  write_file(dir + ".toml", R"([study]
name = "promise"
seed = 5
seeds = 2
horizon = 200
backend = "cpu"
bootstrap_resamples = 100
permutation_resamples = 100
loss_vs_horizon = []
as_deployed = "ideal"
promise_seeds = 12
promise_horizon = 400
promise_contexts = 7

[[sweep]]
name = "x"
file = ")" + dir + R"(-sweep.csv"

[[scenario]]
name = "s"
tune = { sweep = "x" }
score = { sweep = "x" }

[[policy]]
name = "UCB1"
spec = "ucb1:c=0.05,n0=1"

[[policy]]
name = "careful"
spec = "ucb1:c=0.05,n0=1@conservative:alpha=0.01"
)");
  const CliResult run = run_cli("run '" + dir + ".toml' --out '" + dir + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto results = nlohmann::json::parse(read_all(dir + "/results.json"));
  EXPECT_EQ(results["study"]["promise_check"]["seeds"], 12);
  EXPECT_EQ(results["study"]["promise_check"]["horizon"], 400);
  nlohmann::json promise;
  for (const auto& s : results["scores"]) {
    if (s["policy"] == "UCB1") {
      EXPECT_FALSE(s.contains("promise"));
    }
    if (s["policy"] == "careful") promise = s["promise"];
  }
  ASSERT_TRUE(promise.is_object());
  EXPECT_EQ(promise["alpha"], 0.01);
  EXPECT_EQ(promise["contexts"], 7);
  EXPECT_EQ(promise["seeds"], 12);
  EXPECT_EQ(promise["horizon"], 400);

  // The same check run directly on the seven evenly spaced contexts of the 31: indices k * 31 / 7.
  const Sweep sweep = read_sweep_csv(dir + "-sweep.csv");
  ASSERT_EQ(sweep.num_contexts(), 31);
  ReplayJob job;
  job.sweep = &sweep;
  job.contexts = {0, 4, 8, 13, 17, 22, 26};
  job.configs = {parse_policy_spec("ucb1:c=0.05,n0=1@conservative:alpha=0.01")};
  job.seeds = 12;
  job.seed_base = 5;
  job.horizon = 400;
  const BudgetCheck direct = check_budget(job, 0.01);
  EXPECT_EQ(promise["replays_broken"], direct.replays_broken[0]);
  EXPECT_EQ(promise["seeds_broken"], direct.seeds_broken[0]);
  EXPECT_EQ(promise["first_break_call"], direct.first_break_call[0]);
  // Unconstrained UCB1 on the same replays breaks a 1% budget somewhere: the check can see a break.
  job.configs = {parse_policy_spec("ucb1:c=0.05,n0=1")};
  EXPECT_GT(check_budget(job, 0.01).replays_broken[0], 0);

  const std::string report = read_all(dir + "/report.md");
  EXPECT_NE(report.find("## Conservative promise"), std::string::npos);
  EXPECT_NE(report.find("| careful | 0.01 | " + std::to_string(direct.replays_broken[0])), std::string::npos)
      << report;
}
