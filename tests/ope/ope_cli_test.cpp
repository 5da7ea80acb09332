// The decision-log loop end to end: the real plugin, driven by plugin-check over a simulated sweep
// with an epsilon-greedy behaviour policy (eps = 0.3), writes its decision log; `ncclbot ope`
// reads it and estimates AUTO's mean latency per logged call; the truth (the sweep's arm means
// under AUTO's choices, over the same calls) lies inside the SNIPS and DR intervals, IPS is within
// 10% of it and DR within 0.5%. The sweep is stationary (--observation off); the last test checks
// the truth under level shifts (docs/ope.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "support/plugin_logged_run.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

using Logged = PluginLoggedRun;

Logged logged_run(const std::string& behaviour, int horizon) {
  return plugin_logged_run(
      "decisions",
      "--fabric h100-ib-a --seed 3 --nodes 4 --collectives allreduce,allgather --samples 8 "
      "--observation off",
      behaviour, horizon);
}

// The truth of AUTO or of `random` recounted from the files alone: for every logged call, the mean
// of the sweep's samples of the arm NCCL picked (the record's nccl_slot), or the plain average of
// those means over the arms the record's cost table marks usable; averaged over the calls.
double truth_from_the_files(const Logged& l, bool auto_target) {
  const ncclbot::Sweep sweep = ncclbot::read_sweep_csv(l.sweep);
  const ncclbot::SweepView v = sweep.view();
  const ncclbot::DecisionLogData log = ncclbot::read_decision_logs({l.log});
  const auto sample_mean = [&](int c, int slot) {
    double sum = 0.0;
    for (int r = 0; r < v.samples; ++r) sum += double(v.sample(c, slot, r));
    return sum / v.samples;
  };
  double total = 0.0;
  for (const auto& call : log.calls) {
    int where = -1;
    for (int c = 0; c < sweep.num_contexts(); ++c) {
      const ncclbot::Context& ctx = sweep.context(c);
      if (int(ctx.collective) == call.collective && ctx.bytes == call.bytes &&
          uint32_t(ctx.nodes) == call.nodes && uint32_t(ctx.nodes * ctx.gpus_per_node) == call.ranks)
        where = c;
    }
    EXPECT_GE(where, 0) << call.bytes;
    if (auto_target) {
      total += sample_mean(where, call.nccl_slot);
      continue;
    }
    const auto& costs = *std::find_if(log.contexts.begin(), log.contexts.end(), [&](const auto& r) {
      return r.collective == call.collective && r.bytes == call.bytes && r.nodes == call.nodes;
    });
    double sum = 0.0;
    int usable = 0;
    for (int s = 0; s < ncclbot::kNumNcclArms; ++s)
      if (costs.cost_us[s] >= 0.0f) {
        sum += sample_mean(where, s);
        ++usable;
      }
    total += sum / usable;
  }
  return total / double(log.calls.size());
}

}  // namespace

TEST(OpeCli, AutosTruthLiesInsideTheIntervalsOfAnEpsilonGreedyLog) {
  const Logged l = logged_run("egreedy:eps=0.3,decay=0,n0=4", 300);
  const CliResult r = run_cli("ope --log '" + l.log + "' --policy auto --policy random --sweep '" + l.sweep +
                              "' --resamples 999 --seed 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["behaviour"], "egreedy:eps=0.3,decay=0,n0=4");
  EXPECT_GT(j["calls"].get<int>(), 10000);
  ASSERT_EQ(j["policies"].size(), 2u);
  for (const auto& target : j["policies"]) {
    const double truth = target["truth_us"];
    EXPECT_NEAR(truth, truth_from_the_files(l, target["policy"] == "auto"), 1e-9 * truth) << target["policy"];
    for (const auto& e : target["estimators"]) {
      const std::string name = e["name"];
      const double lo = e["ci"][0], hi = e["ci"][1], v = e["value_us"];
      // DR's interval holds the truth for AUTO in 39-40 of 40 such logs but for a randomised target
      // in only about 31 of 40 (docs/ope.md, the coverage study), so for `random` its precision is
      // checked instead: within 0.5% (its RMSE there is 0.15%).
      if (name == "SNIPS" || (name == "DR" && target["policy"] == "auto")) {
        EXPECT_LE(lo, truth) << target["policy"] << " " << name;
        EXPECT_GE(hi, truth) << target["policy"] << " " << name;
      }
      if (name == "DR") {
        EXPECT_LT(std::abs(v - truth) / truth, 0.005) << target["policy"] << " DR " << v;
      }
      if (name == "IPS") {
        EXPECT_LT(std::abs(v - truth) / truth, 0.10)
            << target["policy"] << " IPS " << v << " truth " << truth;
      }
      EXPECT_GT(e["n_effective"].get<double>(), 100.0);
    }
  }
  EXPECT_NE(r.err.find("ope: "), std::string::npos);
}

TEST(OpeCli, BadLogsAndUnsupportedTargetsAreExit2) {
  const Logged l = logged_run("greedy:n0=4", 40);
  // Greedy logs probability 1: every arm it never played has propensity 0 for a target that plays it.
  const CliResult r = run_cli("ope --log '" + l.log + "' --policy random");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("zero propensity"), std::string::npos) << r.err;
  const CliResult t = run_cli("ope --log '" + l.log + "' --policy thompson");
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("zero propensity"), std::string::npos) << t.err;
  const std::string junk = temp_dir() + "/junk.log";
  write_file(junk, "NCBTLOG");
  const CliResult b = run_cli("ope --log '" + junk + "' --policy auto");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(junk + ": not an ncclbot decision log"), std::string::npos) << b.err;
  // plugin-check writes a new log only.
  const CliResult again = run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + l.sweep +
                                  "' --policy 'greedy:n0=4' --horizon 5 --log '" + l.log + "'");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.err;
}

// Thompson sampling logs the win probability of each arm it played (computed by the log's writer
// thread): every propensity is in (0, 1], many are below 1, and ope estimates from the log.
TEST(OpeCli, ThompsonLogsCarryTheirWinProbabilities) {
  const Logged l = logged_run("thompson:n0=1,sigma=0.3", 120);
  const ncclbot::DecisionLogData log = ncclbot::read_decision_logs({l.log});
  ASSERT_GT(log.calls.size(), 5000u);
  size_t below_one = 0;
  for (const auto& c : log.calls) {
    ASSERT_GT(c.propensity, 0.0) << "call " << c.call_index;
    ASSERT_LE(c.propensity, 1.0) << "call " << c.call_index;
    below_one += c.propensity < 0.999;
  }
  EXPECT_GT(below_one, log.calls.size() / 10);
  const CliResult r = run_cli("ope --log '" + l.log + "' --policy auto --sweep '" + l.sweep + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double truth = j["policies"][0]["truth_us"];
  for (const auto& e : j["policies"][0]["estimators"])
    if (e["name"] == "DR") {
      EXPECT_LE(e["ci"][0].get<double>(), truth);
      EXPECT_GE(e["ci"][1].get<double>(), truth);
    }
}

// Learning targets by the replay method on a uniform (random) log: UCB1's and greedy's values
// with their acceptance rates, each truth (the target run on the sweep for as many calls per
// context as were accepted) inside the interval. Under a uniform behaviour the acceptance rate is
// the mean over calls of 1/K (K: the context's usable arms), within binomial noise.
TEST(OpeCli, LearningTargetsByTheReplayMethod) {
  const Logged l = logged_run("random", 300);
  const CliResult r =
      run_cli("ope --log '" + l.log + "' --policy 'ucb1:c=0.1,n0=1' --policy 'greedy:n0=1' --sweep '" +
              l.sweep + "' --seed 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const ncclbot::OpeData data = ncclbot::ope_data(ncclbot::read_decision_logs({l.log}));
  double expected_rate = 0;
  for (const auto& c : data.calls) expected_rate += 1.0 / data.contexts[size_t(c.context)].mask.count();
  expected_rate /= double(data.calls.size());
  for (const auto& target : j["policies"]) {
    const auto& est = target["estimators"];
    ASSERT_EQ(est.size(), 4u) << target;
    const auto& rm = est[3];
    ASSERT_EQ(rm["name"], "replay");
    const double n = double(data.calls.size()), rate = rm["acceptance_rate"];
    EXPECT_NEAR(rate, expected_rate, 4 * std::sqrt(expected_rate * (1 - expected_rate) / n))
        << target["policy"];
    EXPECT_EQ(rm["accepted"].get<double>(), rm["n_effective"].get<double>());
    const double truth = rm["truth_us"];
    EXPECT_LE(rm["ci"][0].get<double>(), truth) << target["policy"];
    EXPECT_GE(rm["ci"][1].get<double>(), truth) << target["policy"];
  }
  // A deterministic behaviour does not allow the method: the entry says why instead.
  const Logged g = logged_run("greedy:n0=4", 40);
  const CliResult d = run_cli("ope --log '" + g.log + "' --policy auto --json");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto dj = nlohmann::json::parse(d.out);
  EXPECT_EQ(dj["policies"][0]["estimators"].size(), 3u);
  EXPECT_NE(dj["policies"][0]["replay_method_unavailable"].get<std::string>().find("randomised behaviour"),
            std::string::npos);
}

// table:FILE targets are decided by the plugin's own table code. A table that names, for every
// logged context, NCCL's own pick (read here from the sweep's prior, NCCL's rule) gives exactly
// AUTO's estimates; a table that forces Ring/Simple on all-reduce gives other ones.
TEST(OpeCli, ATableTargetIsWhatTheTableModePluginWouldPlay) {
  const Logged l = logged_run("egreedy:eps=0.3,decay=0,n0=4", 120);
  const ncclbot::Sweep sweep = ncclbot::read_sweep_csv(l.sweep);
  const ncclbot::SweepView v = sweep.view();
  std::string rows = "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const auto& ctx = sweep.context(c);
    const int pick = ncclbot::nccl_argmin(v.mask(c).nccl_arms(), [&](int s) { return v.prior(c, s); });
    rows += "*," + std::string(ncclbot::collective_name(ctx.collective)) + "," + std::to_string(ctx.nodes) +
            "," + std::to_string(ctx.gpus_per_node) + "," + std::to_string(ctx.bytes) + "," +
            std::to_string(ctx.bytes) + "," + std::string(ncclbot::algo_name(ncclbot::slot_algo(pick))) +
            "," + std::string(ncclbot::proto_name(ncclbot::slot_proto(pick))) + "\n";
  }
  const std::string same = temp_dir() + "/nccl.csv", ring = temp_dir() + "/ring.csv";
  write_file(same, rows);
  write_file(ring,
             "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
             "*,allreduce,*,*,0,18446744073709551615,Ring,Simple\n");
  const CliResult r = run_cli("ope --log '" + l.log + "' --policy auto --policy 'table:" + same +
                              "' --policy 'table:" + ring + "' --sweep '" + l.sweep + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["policies"].size(), 3u);
  EXPECT_EQ(j["policies"][1]["policy"], "table:" + same);
  EXPECT_EQ(j["policies"][1]["estimators"], j["policies"][0]["estimators"]);
  EXPECT_EQ(j["policies"][1]["truth_us"], j["policies"][0]["truth_us"]);
  EXPECT_NE(j["policies"][2]["truth_us"], j["policies"][0]["truth_us"]);
  const CliResult bad = run_cli("ope --log '" + l.log + "' --policy 'table:" + temp_dir() + "/none.csv'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("none.csv"), std::string::npos) << bad.err;
}

// Under level shifts the truth is the target's mean latency at the levels of the logged calls. With
// one sample per arm every measured latency is the arm's mean times the call's level exactly, so
// AUTO's truth from a random log equals the mean latency AUTO itself measured on the same calls
// (plugin-check driving AUTO with the same seed, hence the same change points) — and differs from
// the sweep's means without the levels.
TEST(OpeCli, UnderLevelShiftsTheTruthIsTheTargetsLatencyAtTheLoggedLevels) {
  const std::string dir = temp_dir(), sweep = dir + "/drift.csv";
  ASSERT_EQ(run_cli("synth --fabric h100-ib-a --seed 3 --nodes 4 --collectives allreduce --samples 1 "
                    "--observation on --warmup off --drift on --shift-rate 0.02 --shift-size 0.3 "
                    "--shift-arm-size 0 --out '" +
                    sweep + "'")
                .exit_code,
            0);
  const AutoTruthAgainstItsOwnLog c = auto_truth_against_its_own_log(sweep, 200);
  const ncclbot::DecisionLogData& own = c.own;
  const double measured = c.measured;
  ASSERT_EQ(own.calls.size(), 31u * 200u);
  EXPECT_NEAR(c.truth, measured, 1e-6 * measured);
  // Without the levels: the sweep's means of AUTO's picks.
  const ncclbot::Sweep s = ncclbot::read_sweep_csv(sweep);
  double flat = 0;
  for (const auto& c : own.calls)
    for (int x = 0; x < s.num_contexts(); ++x)
      if (s.context(x).bytes == c.bytes) flat += s.view().mean(x, c.slot);
  flat /= double(own.calls.size());
  EXPECT_GT(std::abs(flat - measured), 0.01 * measured);
}

// The resampling options: a block length that is no whole number of calls, a backend that is
// neither cpu nor cuda, and cuda where no device is usable are exit 2 naming the option; on one
// thread or two the numbers are the same.
TEST(OpeCli, ResamplingOptionsAreCheckedAndThreadsChangeNoNumber) {
  const Logged l = logged_run("random", 60);
  const std::string base = "ope --log '" + l.log + "' --policy auto --json";
  for (const std::string& bad :
       std::vector<std::string>{"--block-length 0", "--block-length x", "--backend gpu"}) {
    const CliResult r = run_cli(base + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << r.err;
  }
  const CliResult cuda = run_cli(base + " --backend cuda");
  if (cuda.exit_code != 0) {
    EXPECT_EQ(cuda.exit_code, 2);
    EXPECT_NE(cuda.err.find("--backend cuda: "), std::string::npos) << cuda.err;
  }
  const CliResult one = run_cli(base + " --threads 1"), two = run_cli(base + " --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  const auto j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["block_length"][0], 4);  // 60 calls a context: 4^3 >= 60 > 2^3
}
