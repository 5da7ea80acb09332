// The plugin under a stand-in NCCL (plugin/standin_nccl.hpp) that makes the tuner and profiler
// calls in the order of NCCL 2.27, 2.28, 2.29 and 2.30: a training loop over three communicators
// (tensor, data and pipeline parallel groups) with grouped calls and cost tables NCCL restricted,
// copy-engine collectives, and CUDA-graph capture followed by replays. The plugin must never fail a
// call, never revive an entry NCCL removed, never leave NCCL's arm when it must not, and never take
// a graph replay for a fresh decision's latency.
#include "plugin/standin_nccl.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "ncclbot/log/decision_log.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// All-reduce costs as NCCL's model gives them, and the same with entries NCCL removed
// (NCCL_ALGO=^NVLS, NCCL_PROTO=^LL128: -1 there).
CostTable7x3 full_table(size_t bytes) {
  CostTable7x3 t;
  const float b = float(bytes) / 1024.0f;
  t.t[0][0] = 10 + 0.9f * b, t.t[0][1] = 12 + 0.5f * b, t.t[0][2] = 30 + 0.2f * b;
  t.t[1][0] = 11 + 0.8f * b, t.t[1][1] = 13 + 0.45f * b, t.t[1][2] = 28 + 0.25f * b;
  t.t[4][0] = 9 + 1.0f * b, t.t[4][2] = 25 + 0.3f * b;
  return t;
}
CostTable7x3 restricted_table(size_t bytes) {
  CostTable7x3 t = full_table(bytes);
  for (int a = 0; a < 7; ++a) t.t[a][1] = -1.0f;
  for (int p = 0; p < 3; ++p) t.t[4][p] = -1.0f;
  return t;
}

struct Online {
  EnvVar mode{"NCCLBOT_MODE", "online"}, policy{"NCCLBOT_POLICY", "egreedy:eps=0.3,decay=0,n0=2"},
      agree{"NCCLBOT_AGREEMENT", "local"}, seed{"NCCLBOT_SEED", "5"};
};

// The training loop: three communicators, each step a group of two or three collectives (numPipeOps
// > 1) per communicator, sizes cycling; every call's table restricted on odd steps. Returns the
// getCollInfo calls made.
long training_loop(NcclRelease release, int steps, int* failures, int* revived) {
  std::vector<std::unique_ptr<StandInNccl>> comms;
  comms.push_back(std::make_unique<StandInNccl>(release, 0x7e50, 8, 1));   // tensor parallel
  comms.push_back(std::make_unique<StandInNccl>(release, 0xda7a, 32, 4));  // data parallel
  comms.push_back(std::make_unique<StandInNccl>(release, 0x919e, 2, 2));   // pipeline parallel
  for (int step = 0; step < steps; ++step)
    for (size_t c = 0; c < comms.size(); ++c) {
      std::vector<StandInOp> ops;
      for (int k = 0; k < 2 + (step + int(c)) % 2; ++k) ops.push_back({4, size_t(1024) << ((step + k) % 12)});
      const size_t bytes = ops[0].bytes;
      const CostTable7x3 t = step % 2 ? restricted_table(bytes) : full_table(bytes);
      comms[c]->group(ops, t, false, [&](size_t i, int arm) { return 20.0 + double(i) + double(arm); });
    }
  long calls = 0;
  for (auto& c : comms) {
    calls += c->tuner_calls();
    *failures += c->failures();
    *revived += c->revived();
  }
  comms.clear();
  return calls;
}

}  // namespace

// NCCL 2.30 (tuner v6: getCollInfo then getChunkSize) drives 30,000 calls over three communicators
// with grouped calls and restricted tables: no call fails, no removed entry comes back, and without a
// table naming chunk sizes getChunkSize leaves NCCL's chunk size.
TEST(StandInNccl, ThirtyThousandV6CallsOverThreeCommunicatorsNeverFail) {
  Online online;
  int failures = 0, revived = 0;
  // 3 communicators x 2-3 collectives a step: 7.5 calls a step.
  const long calls = training_loop(kNccl230, 4000, &failures, &revived);
  EXPECT_EQ(calls, 30000);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(revived, 0);
}

// The same loop in the call order of each earlier release the plugin binds.
TEST(StandInNccl, EveryReleasesCallOrderNeverFails) {
  for (const NcclRelease& r : {kNccl227, kNccl228, kNccl229, kNccl231}) {
    Online online;
    int failures = 0, revived = 0;
    EXPECT_EQ(training_loop(r, 400, &failures, &revived), 3000) << r.name;
    EXPECT_EQ(failures, 0) << r.name;
    EXPECT_EQ(revived, 0) << r.name;
  }
}

// Mode off: NCCL's table comes back as it went in, whatever the release.
TEST(StandInNccl, OffNeverChangesAPick) {
  EnvVar mode("NCCLBOT_MODE", "off");
  for (const NcclRelease& r : {kNccl227, kNccl228, kNccl229, kNccl230, kNccl231}) {
    StandInNccl comm(r, 0x0ff, 8, 1);
    for (int step = 0; step < 50; ++step) {
      const CostTable7x3 t = step % 2 ? restricted_table(4096) : full_table(4096);
      const std::vector<int> arms = comm.group({{4, 4096}}, t, false, [](size_t, int) { return 20.0; });
      EXPECT_EQ(arms[0], t.pick()) << r.name;
    }
    EXPECT_EQ(comm.failures(), 0);
    EXPECT_EQ(comm.chunks_changed(), 0);
  }
}

// CUDA graphs (NCCL 2.29, profiler v6, local mode with a decision log): 20 eager calls, one call
// captured into a graph, then 30 eager calls each followed by a replay of the graph. Every eager
// call's logged record carries its own index and the latency the stand-in gave that call; the 30
// replays are logged as such with the captured arm and their own latencies, never as a decision's;
// `ope` leaves them out. Before the plugin told replays apart, the captured call's decision took the
// next eager call's latency and each replay an eager call's place.
TEST(StandInNccl, GraphReplaysAreLoggedAsReplaysAndNeverTakenForADecisionsLatency) {
  Online online;
  const std::string log = temp_dir() + "/graph.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  clear_log();
  int captured_arm = -1;
  {
    StandInNccl comm(kNccl229, 0x96a9, 8, 1);
    ASSERT_TRUE(comm.mask() & kNcclProfileCollApi);
    const CostTable7x3 t = full_table(4096);
    const auto eager = [&](int latency) {
      comm.group({{4, 4096}}, t, false, [&](size_t, int) { return double(latency); });
    };
    for (int k = 0; k < 20; ++k) eager(100 + k);
    captured_arm = comm.group({{4, 4096}}, t, true, [](size_t, int) { return 0.0; })[0];
    for (int k = 0; k < 30; ++k) {
      eager(200 + k);
      comm.replay([&](size_t, int) { return double(5000 + k); });
    }
    comm.copy_engine({2, 8192});
    comm.finalize_profiler();
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogInfo, "30 CUDA-graph replays of 1 captured collectives logged and not learned"));
  EXPECT_TRUE(logged(kNcclLogInfo, "1 copy-engine collectives not learned"));
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  std::vector<uint64_t> indices;
  std::vector<double> eager_latency, replay_latency;
  for (const auto& r : data.calls) {
    if (r.graph_replay) {
      EXPECT_EQ(r.slot, captured_arm);
      EXPECT_TRUE(std::isnan(r.propensity));
      replay_latency.push_back(r.latency_us);
    } else {
      indices.push_back(r.call_index);
      eager_latency.push_back(r.latency_us);
    }
  }
  ASSERT_EQ(indices.size(), 50u);
  ASSERT_EQ(replay_latency.size(), 30u);
  for (size_t k = 0; k < 50; ++k) {
    const uint64_t index = k < 20 ? k : k + 1;  // call 20 was captured
    EXPECT_EQ(indices[k], index) << k;
    EXPECT_EQ(eager_latency[k], k < 20 ? 100.0 + double(k) : 200.0 + double(k - 20)) << k;
  }
  for (size_t k = 0; k < 30; ++k) EXPECT_EQ(replay_latency[k], 5000.0 + double(k));
  const CliResult r = run_cli("ope --log '" + log + "' --policy auto --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("30 CUDA-graph replays left out"), std::string::npos) << r.err;
}

// Captured records stay until finalize, 16,384 per communicator at most: a job that captures more
// has the rest settled and their replays unlogged, and eager collectives still report.
TEST(StandInNccl, CapturedCollectivesHaveABudgetOfTheirOwn) {
  Online online;
  clear_log();
  {
    StandInNccl comm(kNccl229, 0xcab, 8, 1);
    const CostTable7x3 t = full_table(4096);
    for (int k = 0; k < 16400; ++k) comm.group({{4, 4096}}, t, true, [](size_t, int) { return 0.0; });
    comm.replay([](size_t, int) { return 50.0; });
    for (int k = 0; k < 10; ++k) comm.group({{4, 4096}}, t, false, [](size_t, int) { return 20.0; });
    comm.finalize_profiler();
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogInfo, "10 latencies delivered, 0 collectives unfinished"));
  EXPECT_TRUE(logged(kNcclLogInfo, "16384 CUDA-graph replays of 16400 captured collectives"));
}
