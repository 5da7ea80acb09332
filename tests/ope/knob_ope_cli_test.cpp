// Off-policy estimates from a knob log end to end (docs/ope.md "Knob logs"): the real plugin in knob
// mode, driven by plugin-check over a simulated knob sweep with an epsilon-greedy behaviour over the
// knob arms, writes its decision log; `ncclbot ope` reads it with the knob sweep as the truth. The
// truths are recounted here from the files alone, and the estimates' intervals hold them; a table
// target that forces a knob setting is priced at that setting's arm; a slot sweep has no truth for
// an arm off NCCL's knobs.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "support/plugin_logged_run.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

using KnobLogged = PluginLoggedRun;

// Three all-reduce contexts on one node, every algorithm and protocol crossed with 0 or 8 channels
// and NCCL's or a 64 KiB chunk, logged over 2000 calls each.
KnobLogged knob_logged_run() {
  return plugin_logged_run(
      "knobs",
      "--fabric h100-ib-a --seed 3 --nodes 1 --collectives allreduce --min-bytes 65536 "
      "--max-bytes 262144 --samples 8 --observation off --knobs 'channels=0,8;chunk=0,64K'",
      "egreedy:eps=0.5,decay=0,n0=1", 2000);
}

// The mean of the sweep's samples of `arm` in the sweep context of logged call `call`, found by hand.
double arm_sample_mean(const ncclbot::Sweep& sweep, const ncclbot::decision_log::CallRecord& call,
                       const ncclbot::Arm& arm) {
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const ncclbot::Context& ctx = sweep.context(c);
    if (int(ctx.collective) != call.collective || ctx.bytes != call.bytes ||
        uint32_t(ctx.nodes) != call.nodes)
      continue;
    const auto arms = sweep.arms(c);
    for (size_t i = 0; i < arms.size(); ++i)
      if (arms[i] == arm) {
        double sum = 0.0;
        for (int r = 0; r < sweep.samples(); ++r) sum += double(sweep.arm_sample(c, int(i), r));
        return sum / sweep.samples();
      }
  }
  ADD_FAILURE() << "no arm of the call's context: " << call.bytes;
  return NAN;
}

// Over every logged call, the mean of the sweep's samples of the arm `pick` names for it.
template <typename Pick>
double truth_from_the_files(const KnobLogged& l, Pick pick) {
  const ncclbot::Sweep sweep = ncclbot::read_sweep_csv(l.sweep);
  const ncclbot::DecisionLogData log = ncclbot::read_decision_logs({l.log});
  double total = 0.0;
  for (const auto& call : log.calls) total += arm_sample_mean(sweep, call, pick(call));
  return total / double(log.calls.size());
}

}  // namespace

TEST(OpeKnobCli, EstimatesOverAKnobLogHoldTheirTruths) {
  const KnobLogged l = knob_logged_run();
  const std::string table = temp_dir() + "/ring8.csv";
  write_file(table,
             "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n"
             "*,allreduce,*,*,0,18446744073709551615,Ring,Simple,8,65536\n");
  const CliResult r =
      run_cli("ope --log '" + l.log + "' --policy auto --policy 'ucb1:c=0.5' --policy 'table:" + table +
              "' --sweep '" + l.sweep + "' --seed 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["knobs"], "channels=0,8;chunk.LL=0,65536;chunk.LL128=0;chunk.Simple=0,65536");
  EXPECT_EQ(j["knob_calls"], j["calls"]);
  ASSERT_EQ(j["policies"].size(), 3u);
  // AUTO: NCCL's pick at NCCL's own knobs on every call.
  const auto& autos = j["policies"][0];
  const double auto_truth = autos["truth_us"];
  EXPECT_NEAR(auto_truth,
              truth_from_the_files(l, [](const auto& call) { return ncclbot::Arm::of_slot(call.nccl_slot); }),
              1e-9 * auto_truth);
  for (const auto& e : autos["estimators"]) {
    if (e["name"] == "DR" || e["name"] == "SNIPS") {
      EXPECT_LE(e["ci"][0].get<double>(), auto_truth) << e;
      EXPECT_GE(e["ci"][1].get<double>(), auto_truth) << e;
    }
    if (e["name"] == "DR") {
      EXPECT_LT(std::abs(e["value_us"].get<double>() - auto_truth) / auto_truth, 0.005) << e;
    }
  }
  // UCB1 over the knob arms, by the replay method: its interval holds its truth.
  const auto& rm = j["policies"][1]["estimators"][3];
  ASSERT_EQ(rm["name"], "replay") << j["policies"][1];
  EXPECT_LE(rm["ci"][0].get<double>(), rm["truth_us"].get<double>()) << rm;
  EXPECT_GE(rm["ci"][1].get<double>(), rm["truth_us"].get<double>()) << rm;
  // The table plays Ring/Simple at 8 channels and 64 KiB chunks on every call.
  const ncclbot::Arm ring8{ncclbot::Algo::kRing, ncclbot::Proto::kSimple, 8, 65536};
  const double ring_truth = j["policies"][2]["truth_us"];
  EXPECT_NEAR(ring_truth, truth_from_the_files(l, [&](const auto&) { return ring8; }), 1e-9 * ring_truth);
  EXPECT_NE(ring_truth, auto_truth);
}

// A slot log takes a knob sweep as its truth: its arms are the sweep's at NCCL's own knobs, which the
// simulator draws as it draws the slot sweep's (the same seed), so every truth is the slot sweep's.
TEST(OpeKnobCli, ASlotLogTakesAKnobSweep) {
  const KnobLogged knobs = knob_logged_run();
  const PluginLoggedRun slots =
      plugin_logged_run("slots",
                        "--fabric h100-ib-a --seed 3 --nodes 1 --collectives allreduce --min-bytes 65536 "
                        "--max-bytes 262144 --samples 8 --observation off",
                        "random", 300);
  const std::string targets = " --policy auto --policy 'ucb1:c=0.5' --policy random --json";
  const CliResult k = run_cli("ope --log '" + slots.log + "' --sweep '" + knobs.sweep + "'" + targets);
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const CliResult s = run_cli("ope --log '" + slots.log + "' --sweep '" + slots.sweep + "'" + targets);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto kj = nlohmann::json::parse(k.out), sj = nlohmann::json::parse(s.out);
  EXPECT_FALSE(kj.contains("knobs"));
  ASSERT_EQ(kj["policies"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(kj["policies"][i]["truth_us"], sj["policies"][i]["truth_us"]) << i;
    EXPECT_EQ(kj["policies"][i]["estimators"], sj["policies"][i]["estimators"]) << i;
  }
}

TEST(OpeKnobCli, ASlotSweepHasNoTruthOffNcclsKnobs) {
  const KnobLogged l = knob_logged_run();
  const std::string slots = temp_dir() + "/slot_sweep.csv";
  ASSERT_EQ(run_cli("synth --fabric h100-ib-a --seed 3 --nodes 1 --collectives allreduce --min-bytes 65536 "
                    "--max-bytes 262144 --samples 8 --observation off --out '" +
                    slots + "'")
                .exit_code,
            0);
  const std::string table = temp_dir() + "/ring8.csv";
  write_file(table,
             "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels\n"
             "*,allreduce,*,*,0,18446744073709551615,Ring,Simple,8\n");
  // NCCL's own knobs are in the slot sweep: AUTO has its truth there, the same as in the knob sweep.
  const CliResult a = run_cli("ope --log '" + l.log + "' --policy auto --sweep '" + slots + "' --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const CliResult k = run_cli("ope --log '" + l.log + "' --policy auto --sweep '" + l.sweep + "' --json");
  ASSERT_EQ(k.exit_code, 0) << k.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["policies"][0]["truth_us"],
            nlohmann::json::parse(k.out)["policies"][0]["truth_us"]);
  const CliResult r =
      run_cli("ope --log '" + l.log + "' --policy 'table:" + table + "' --sweep '" + slots + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(slots + ": has no measurement of an arm the target plays"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Ring/Simple at 8 channels, NCCL's chunk"), std::string::npos) << r.err;
}

// Under level shifts of each arm's own, on a knob sweep, AUTO's truth from a random log is the mean
// latency AUTO itself measured on the same calls (one sample per arm, so each latency is the mean
// times the call's level, drawn by the arm's index among the knob sweep's arms): a level read at the
// slot's index instead of the knob arm's would not match.
TEST(OpeKnobCli, UnderEachArmsLevelShiftsTheTruthIsAutosOwnLatency) {
  const std::string dir = temp_dir(), sweep = dir + "/shifting_knobs.csv";
  ASSERT_EQ(
      run_cli("synth --fabric h100-ib-a --seed 3 --nodes 1 --collectives allreduce --min-bytes 65536 "
              "--max-bytes 262144 --samples 1 --observation on --warmup off --first-use off --drift on "
              "--shift-rate 0.01 --shift-size 0.2 --shift-arm-size 0.2 --knobs 'channels=0,8;chunk=0,64K' "
              "--out '" +
              sweep + "'")
          .exit_code,
      0);
  const AutoTruthAgainstItsOwnLog c = auto_truth_against_its_own_log(sweep, 2000);
  ASSERT_EQ(c.own.calls.size(), 3u * 2000u);
  EXPECT_NEAR(c.truth, c.measured, 1e-6 * c.measured);
}
