// Pricing a simulated sweep at the simulator's true latencies: Sweep::price_on replaces each arm's
// price (its samples' mean) by the truth's, the replay still draws the samples, and a study's
// [[sweep]] price = "truth" does this with the noise-free twin of its synthesised sweep.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/run_cli.hpp"

namespace {

using namespace ncclbot;

const Context kCtx{"f", Collective::kAllReduce, 2, 8, 1 << 20};

// Tree/Simple and Ring/Simple of one context, two samples each.
Sweep two_arms(float tree0, float tree1, float ring0, float ring1) {
  SweepBuilder b("s.csv");
  const int tree = arm_slot(Algo::kTree, Proto::kSimple), ring = arm_slot(Algo::kRing, Proto::kSimple);
  b.add(kCtx, tree, 0, tree0, 5.0f, 2);
  b.add(kCtx, tree, 1, tree1, 5.0f, 3);
  b.add(kCtx, ring, 0, ring0, 6.0f, 4);
  b.add(kCtx, ring, 1, ring1, 6.0f, 5);
  return b.build();
}

double replay_loss(const Sweep& s, const std::string& spec, int horizon, bool final_loss) {
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec(spec)};
  job.seeds = 3;
  job.horizon = horizon;
  const ReplayResults r = run_cpu_replay(job);
  return final_loss ? r.final_loss[0] : r.online[0];
}

}  // namespace

// The samples say Tree (9, 9) beats Ring (10, 12); the truth says Ring (8) beats Tree (9). Priced on
// the truth, by hand: the oracle plays Ring, loss 0; AUTO (prior 5 < 6) plays Tree, 9 / 8 - 1 =
// 0.125; etc:m=1 probes Tree then Ring and keeps Tree, whose sample 9 is below Ring's 10 and 12:
// online (0.125 + 0 + 8 x 0.125) / 10 = 0.1125, final 0.125. Priced on the samples' means the same
// replays give AUTO and etc a final loss of 0.
TEST(PriceOnTruth, LossesAreTheTruthsWhileTheSamplesAreWhatIsSeen) {
  Sweep s = two_arms(9, 9, 10, 12);
  EXPECT_EQ(replay_loss(s, "auto", 10, true), 0.0);
  EXPECT_EQ(replay_loss(s, "etc:m=1", 10, true), 0.0);
  s.price_on(two_arms(9, 9, 8, 8));
  EXPECT_TRUE(s.priced_on_truth());
  EXPECT_EQ(s.arm_view().mean(0, arm_slot(Algo::kRing, Proto::kSimple)), 8.0);
  EXPECT_EQ(s.arm_sample(0, 1, 1), 12.0f);  // the samples stay
  EXPECT_EQ(replay_loss(s, "oracle", 10, false), 0.0);
  EXPECT_DOUBLE_EQ(replay_loss(s, "auto", 10, false), 0.125);
  EXPECT_DOUBLE_EQ(replay_loss(s, "etc:m=1", 10, false), 0.1125);
  EXPECT_DOUBLE_EQ(replay_loss(s, "etc:m=1", 10, true), 0.125);
}

TEST(PriceOnTruth, ATruthOfOtherArmsOrContextsIsRefused) {
  Sweep s = two_arms(9, 9, 10, 12);
  SweepBuilder other("o.csv");
  other.add(kCtx, arm_slot(Algo::kTree, Proto::kSimple), 0, 9.0f, 5.0f, 2);
  EXPECT_THROW(s.price_on(other.build()), std::invalid_argument);
  SweepBuilder elsewhere("e.csv");
  const Context ctx{"g", Collective::kAllReduce, 2, 8, 1 << 20};
  for (int slot : {arm_slot(Algo::kTree, Proto::kSimple), arm_slot(Algo::kRing, Proto::kSimple)})
    elsewhere.add(ctx, slot, 0, 9.0f, 5.0f, 2);
  EXPECT_THROW(s.price_on(elsewhere.build()), std::invalid_argument);
  EXPECT_FALSE(s.priced_on_truth());
}

// A small study on one synthesised sweep, whose [[sweep]] table ends at line 17: a test adds its
// price and observe lines.
namespace {

const std::string kTruthStudyHead = R"([study]
name = "truth"
seeds = 2
horizon = 40
backend = "cpu"
bootstrap_resamples = 100
permutation_resamples = 100
loss_vs_horizon = []
as_deployed = "ideal"

[[sweep]]
name = "x"
preset = "h100-ib-a"
nodes = [2]
collectives = ["allreduce"]
samples = 3
observation = false
)";
const std::string kTruthStudyTail = R"(
[[scenario]]
name = "s"
tune = { sweep = "x" }
score = { sweep = "x" }

[[policy]]
name = "oracle"
spec = "oracle"

[[policy]]
name = "UCB1"
spec = "ucb1:c=0.05,n0=1"
)";

}  // namespace

// A study's synthesised sweep with price = "truth" and no call dynamics: the oracle, which plays the
// truly best arm, pays nothing; results.json and the report say how the sweep was priced. A price
// other than samples or truth is refused at its line.
TEST(PriceOnTruth, AStudySweepPricedAtTheTruth) {
  using namespace ncclbot::test;
  const std::string dir = temp_dir() + "/truth_study";
  const std::string& head = kTruthStudyHead;
  const std::string& tail = kTruthStudyTail;
  write_file(dir + ".toml", head + "price = \"truth\"\n" + tail);
  const CliResult run = run_cli("run '" + dir + ".toml' --out '" + dir + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto results = nlohmann::json::parse(read_all(dir + "/results.json"));
  EXPECT_EQ(results["sweeps"][0]["source"]["price"], "truth");
  for (const auto& s : results["scores"])
    if (s["policy"] == "oracle") {
      for (const auto& l : s["online"]) EXPECT_EQ(l.get<double>(), 0.0);
    }
  EXPECT_NE(read_all(dir + "/report.md").find("priced at the simulator's true latencies"), std::string::npos);

  write_file(dir + "-bad.toml", head + "price = \"mean\"\n" + tail);
  const CliResult bad = run_cli("run '" + dir + "-bad.toml' --out '" + dir + "-bad' --no-figures");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("-bad.toml:18:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("sweep.price 'mean' must be samples"), std::string::npos) << bad.err;
}

// A study's synthesised sweep with observe = "fresh": results.json and the report say so; the oracle
// still pays nothing. observe = "fresh" without price = "truth", or a value other than samples or
// fresh, is refused at its line.
TEST(PriceOnTruth, AStudySweepDrawnAfresh) {
  using namespace ncclbot::test;
  const std::string dir = temp_dir() + "/fresh_study";
  const std::string& head = kTruthStudyHead;
  const std::string& tail = kTruthStudyTail;
  write_file(dir + ".toml", head + "price = \"truth\"\nobserve = \"fresh\"\n" + tail);
  const CliResult run = run_cli("run '" + dir + ".toml' --out '" + dir + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto results = nlohmann::json::parse(read_all(dir + "/results.json"));
  EXPECT_EQ(results["sweeps"][0]["source"]["observe"], "fresh");
  for (const auto& s : results["scores"])
    if (s["policy"] == "oracle") {
      for (const auto& l : s["online"]) EXPECT_EQ(l.get<double>(), 0.0);
    }
  EXPECT_NE(read_all(dir + "/report.md").find("every call's latency drawn afresh"), std::string::npos);

  write_file(dir + "-bad.toml", head + "observe = \"fresh\"\n" + tail);
  const CliResult bad = run_cli("run '" + dir + "-bad.toml' --out '" + dir + "-bad' --no-figures");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("-bad.toml:18:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("it needs price = \"truth\""), std::string::npos) << bad.err;

  write_file(dir + "-bad2.toml", head + "price = \"truth\"\nobserve = \"new\"\n" + tail);
  const CliResult bad2 = run_cli("run '" + dir + "-bad2.toml' --out '" + dir + "-bad2' --no-figures");
  EXPECT_EQ(bad2.exit_code, 2);
  EXPECT_NE(bad2.err.find("-bad2.toml:19:"), std::string::npos) << bad2.err;
  EXPECT_NE(bad2.err.find("sweep.observe 'new' must be samples"), std::string::npos) << bad2.err;
}
