// Call dynamics in the replay core (core/call_dynamics.hpp, replay/replay.hpp): warm-up, first-use
// cost and level shifts, checked against hand traces and against an independent re-derivation of
// the documented draws (std::log instead of portable_log, Random123 called directly).
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/first_use.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/every_mechanism.hpp"
#include "support/run_cli.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

constexpr int kTreeLL = 0;      // algorithm Tree
constexpr int kRingLL = 3;      // algorithm Ring
constexpr int kRingSimple = 5;  // algorithm Ring

// Arms of 15 (Tree/LL), 12 (Ring/LL) and 10 us (Ring/Simple), one sample each, so every draw is known.
Sweep three_arms(const SweepDynamics& d) {
  Sweep s = tiny_sweep({{tiny_context(2, 1024),
                         {{kTreeLL, {15.0f}, {}}, {kRingLL, {12.0f}, {}}, {kRingSimple, {10.0f}, {}}}}});
  s.set_dynamics(d);
  return s;
}

struct Trace {
  std::vector<int> slots;
  std::vector<float> observed;
  ReplayOutcome outcome;
};

Trace run(const PolicyConfig& cfg, const Sweep& s, int horizon, int delay = 0, uint64_t seed = 3,
          int fixed_slot = -1, double call_cost_us = 0.0) {
  ReplayTask task;
  task.call_cost_us = call_cost_us;
  task.sweep = s.view();
  task.fixed_slot = fixed_slot;
  task.horizon = horizon;
  task.delay = delay;
  task.seed = seed;
  task.stream_id = 9;
  Trace tr;
  tr.outcome = visit_policy(cfg, [&](auto& p) {
    return replay_one(p, task, [&](int, int slot, float x) {
      tr.slots.push_back(slot);
      tr.observed.push_back(x);
    });
  });
  return tr;
}

PolicyConfig cold_greedy() {
  PolicyConfig g;
  g.kind = PolicyKind::kGreedy;
  g.n0 = 0.0;
  return g;
}

// A frozen decision (what a supervised selector replays): always `slot`.
Trace run_fixed(int slot, const Sweep& s, int horizon, uint64_t seed = 3, double call_cost_us = 0.0) {
  PolicyConfig f;
  f.kind = PolicyKind::kKnn;
  return run(f, s, horizon, 0, seed, slot, call_cost_us);
}

}  // namespace

// The engine's online loss of `cfg` on the sweep's one context (a communicator of one context),
// seed 3: the replay's own losses plus the first-use charges (replay/first_use.hpp).
double engine_online(const PolicyConfig& cfg, const Sweep& s, int horizon) {
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  PolicySpec spec;
  spec.text = "cold greedy";
  spec.config = cfg;
  job.configs = {spec};
  job.seed_base = 3;
  job.horizon = horizon;
  return run_cpu_replay(job).online_at(0, 0);
}

// Cold greedy, T = 20, arm warm-up 50% over 2 plays (x1.5 on the first play, x1.25 on the second),
// first use of a further algorithm 30 us:
//   call 0: Tree/LL 15 x 1.5 = 22.5 observed; pays 0.5 + 0.5 * 15/10 = 1.25 (Tree is the first algorithm)
//   call 1: Ring/LL 12 x 1.5 = 18;  pays 0.2 + 0.5 * 12/10 = 0.8, and Ring's first use 30/10 = 3
//   call 2: Ring/Simple 10 x 1.5 = 15; pays 0 + 0.5 = 0.5 (Ring already set up)
//   call 3: lowest mean is Ring/Simple (15 < 18 < 22.5): 10 x 1.25 = 12.5; pays 0.25
//   calls 4-19: Ring/Simple at 10, pay 0.
// The replay's own online loss (1.25 + 0.8 + 0.5 + 0.25) / 20 = 0.14 and first uses Tree at call 0,
// Ring at call 1; the communicator (this one context, whose best arm is Ring's: one algorithm
// connected free) pays Ring's first use: the engine's online loss is 0.14 + 3/20 = 0.29.
TEST(CallDynamics, ArmWarmupAndFirstUseFollowTheHandTrace) {
  SweepDynamics d;
  d.call.arm_warmup = 0.5f;
  d.call.arm_warmup_calls = 2;
  d.first_use_base_us = 30.0;
  const Sweep s = three_arms(d);
  const Trace tr = run(cold_greedy(), s, 20);
  ASSERT_EQ(tr.slots.size(), 20u);
  EXPECT_EQ(tr.slots[0], kTreeLL);
  EXPECT_EQ(tr.slots[1], kRingLL);
  EXPECT_EQ(tr.slots[2], kRingSimple);
  for (int t = 3; t < 20; ++t) EXPECT_EQ(tr.slots[size_t(t)], kRingSimple) << t;
  EXPECT_FLOAT_EQ(tr.observed[0], 22.5f);
  EXPECT_FLOAT_EQ(tr.observed[1], 18.0f);
  EXPECT_FLOAT_EQ(tr.observed[2], 15.0f);
  EXPECT_FLOAT_EQ(tr.observed[3], 12.5f);
  EXPECT_FLOAT_EQ(tr.observed[4], 10.0f);
  EXPECT_NEAR(tr.outcome.online_loss, (1.25 + 0.8 + 0.5 + 0.25) / 20, 1e-12);
  EXPECT_EQ(tr.outcome.first_use[kTreeLL / kNumProtos], 0u);
  EXPECT_EQ(tr.outcome.first_use[kRingLL / kNumProtos], 1u);
  for (int a = 2; a < kNumAlgos; ++a) EXPECT_EQ(tr.outcome.first_use[a], kNeverUsed) << a;
  EXPECT_EQ(tr.outcome.final_slot, kRingSimple);
  EXPECT_EQ(tr.outcome.final_loss, 0.0);
  EXPECT_NEAR(engine_online(cold_greedy(), s, 20), (1.25 + 3.8 + 0.5 + 0.25) / 20, 1e-12);
}

// The first-use cost scales with the job: F = base + per_host * hosts (2 hosts here).
TEST(CallDynamics, FirstUseCostGrowsWithHosts) {
  SweepDynamics d;
  d.first_use_base_us = 10.0;
  d.first_use_per_host_us = 5.0;  // F = 20 us on 2 hosts
  const Sweep s = three_arms(d);
  const Trace tr = run(cold_greedy(), s, 10);
  // Calls 0-2 play Tree/LL, Ring/LL, Ring/Simple at their own latencies; Ring's first use adds 20/10.
  EXPECT_NEAR(engine_online(cold_greedy(), s, 10), (0.5 + 0.2 + 2.0) / 10, 1e-12);
  EXPECT_FLOAT_EQ(tr.observed[1], 12.0f);  // set-up time is paid, not observed (kernel time only)
}

// Job warm-up slows every arm alike: it changes what is observed, not what a choice costs.
//   factor(t) = 1 + 1.0 * (4 - t) / 4 for t < 4: 2, 1.75, 1.5, 1.25, then 1.
TEST(CallDynamics, JobWarmupSlowsTheFirstCallsButCostsNothingRelative) {
  SweepDynamics d;
  d.call.job_warmup = 1.0f;
  d.call.job_warmup_calls = 4;
  const Trace tr = run_fixed(kRingSimple, three_arms(d), 8);
  const float expect[8] = {20.0f, 17.5f, 15.0f, 12.5f, 10.0f, 10.0f, 10.0f, 10.0f};
  for (int t = 0; t < 8; ++t) EXPECT_FLOAT_EQ(tr.observed[size_t(t)], expect[t]) << t;
  EXPECT_EQ(tr.outcome.online_loss, 0.0);
}

// Delayed feedback carries the observed (warmed-up) value: at D = 2 the late report of call 0 is its
// observed 22.5, not a fresh draw. Cold greedy (an arm with a pull pending is not untried; while
// every unobserved arm has one, the best observed arm), arm warm-up x1.5, x1.25, then x1:
//   calls 0-2 probe Tree/LL, Ring/LL, Ring/Simple: 22.5, 18, 15 (nothing has arrived yet)
//   call 3: call 0's 22.5 arrived, the others pending: Tree/LL, its second play: 18.75
//   call 4: call 1's 18 arrived (Ring/LL below Tree/LL's 22.5): Ring/LL: 15
//   call 5: call 2's 15 arrived, every arm observed: Ring/Simple (15): 12.5
//   calls 6-11: Ring/Simple (its mean stays the smallest as the late reports arrive): 10 each.
// Losses: 1.25, 0.8, 0.5 | 0.875, 0.5, 0.25 | 0 x 6.
TEST(CallDynamics, DelayedReportsCarryTheObservedValue) {
  SweepDynamics d;
  d.call.arm_warmup = 0.5f;
  d.call.arm_warmup_calls = 2;
  const Trace tr = run(cold_greedy(), three_arms(d), 12, 2);
  const int slots[12] = {kTreeLL,     kRingLL,     kRingSimple, kTreeLL,     kRingLL,     kRingSimple,
                         kRingSimple, kRingSimple, kRingSimple, kRingSimple, kRingSimple, kRingSimple};
  const float observed[12] = {22.5f, 18.0f, 15.0f, 18.75f, 15.0f, 12.5f,
                              10.0f, 10.0f, 10.0f, 10.0f,  10.0f, 10.0f};
  for (int t = 0; t < 12; ++t) {
    EXPECT_EQ(tr.slots[size_t(t)], slots[t]) << t;
    EXPECT_FLOAT_EQ(tr.observed[size_t(t)], observed[t]) << t;
  }
  EXPECT_NEAR(tr.outcome.online_loss, (1.25 + 0.8 + 0.5 + 0.875 + 0.5 + 0.25) / 12, 1e-12);
}

namespace {

// Level shifts, re-derived from the documented draws with independent code: change point n + 1
// comes 1 + floor(log(u) / log(1 - rate)) calls after change point n (u from word 0 of block
// (n, 0x5D000000) of the replay's stream); after change point n arm s has level shared * own, the
// shared level 1 + size * (2 v - 1) with v from word 0 of block (n, 0x5D000080), and its own part
// 1 + arm_size * (2 w - 1) with w from word s % 4 of block (n, 0x5D000001 + s / 4) (each factor 1
// when its size is 0). Replays arm `fixed` and returns how often the best arm changed.
int check_level_shifts(float size, float arm_size, int fixed) {
  SweepDynamics d;
  d.call.shift_rate = 0.02f;
  d.call.shift_size = size;
  d.call.shift_arm_size = arm_size;
  const Sweep s = three_arms(d);
  const uint64_t seed = 5, id = 9;
  auto word = [&](uint32_t n, uint32_t lane, int w) {
    r123::Philox4x32 g;
    const r123::Philox4x32::ctr_type c = {{n, lane, uint32_t(id), uint32_t(id >> 32)}};
    const r123::Philox4x32::key_type k = {{uint32_t(seed), uint32_t(seed >> 32)}};
    return g(c, k)[w];
  };
  auto u01 = [](uint32_t w) { return (double(w) + 0.5) / 4294967296.0; };
  const int T = 3000;
  std::vector<double> level_fixed(T), expected_loss(T), best_us(T);
  double lv[3] = {1, 1, 1};
  const double mean[3] = {15, 12, 10};
  const int slot_of[3] = {kTreeLL, kRingLL, kRingSimple};
  int f = -1;
  for (int a = 0; a < 3; ++a)
    if (slot_of[a] == fixed) f = a;
  EXPECT_GE(f, 0);
  uint32_t n = 0;
  uint64_t next = 1 + uint64_t(std::floor(std::log(u01(word(0, 0x5D000000u, 0))) / std::log(1.0 - 0.02f)));
  int best_changes = 0, prev_best = 2;
  for (int t = 0; t < T; ++t) {
    if (uint64_t(t) == next) {
      ++n;
      const double shared =
          size > 0.0f ? 1.0 + double(size) * (2.0 * u01(word(n, 0x5D000080u, 0)) - 1.0) : 1.0;
      for (int a = 0; a < 3; ++a) {
        const uint32_t w = word(n, 0x5D000001u + uint32_t(slot_of[a]) / 4, slot_of[a] % 4);
        lv[a] = shared * (arm_size > 0.0f ? 1.0 + double(arm_size) * (2.0 * u01(w) - 1.0) : 1.0);
      }
      next += 1 + uint64_t(std::floor(std::log(u01(word(n, 0x5D000000u, 0))) / std::log(1.0 - 0.02f)));
    }
    double best = 1e300;
    int b = 0;
    for (int a = 0; a < 3; ++a)
      if (mean[a] * lv[a] < best) best = mean[a] * lv[a], b = a;
    if (b != prev_best) ++best_changes, prev_best = b;
    level_fixed[size_t(t)] = lv[f];
    best_us[size_t(t)] = best;
    expected_loss[size_t(t)] = mean[f] * lv[f] / best - 1.0;
  }
  EXPECT_GT(n, 30u);  // about 0.02 * 3000 = 60 change points
  // What a first use is charged against (replay/first_use.hpp): the best arm's cost at that call.
  for (int t = 0; t < T; ++t)
    EXPECT_NEAR(best_cost_at(s.view(), 0, seed, id, uint32_t(t)), best_us[size_t(t)], 1e-9) << t;
  const Trace tr = run_fixed(fixed, s, T, seed);
  double sum = 0.0;
  for (int t = 0; t < T; ++t) {
    EXPECT_NEAR(tr.observed[size_t(t)], mean[f] * level_fixed[size_t(t)], 1e-5) << t;
    sum += expected_loss[size_t(t)];
  }
  EXPECT_NEAR(tr.outcome.online_loss, sum / T, 1e-12);
  EXPECT_NEAR(tr.outcome.final_loss, expected_loss[T - 1], 1e-12);
  // A per-call cost of 0.7 us is paid on every call relative to the best arm at that call's levels.
  const Trace costly = run_fixed(fixed, s, T, seed, 0.7);
  double cost_sum = 0.0;
  for (int t = 0; t < T; ++t) cost_sum += expected_loss[size_t(t)] + 0.7 / best_us[size_t(t)];
  EXPECT_NEAR(costly.outcome.online_loss, cost_sum / T, 1e-12);
  EXPECT_EQ(costly.outcome.final_loss, tr.outcome.final_loss);
  return best_changes;
}

}  // namespace

// Each arm's own part, wide enough for the best arm to change, on top of a shared part.
TEST(CallDynamics, LevelShiftsFollowTheDocumentedDrawsAndMoveTheBestArm) {
  EXPECT_GT(check_level_shifts(0.1f, 0.4f, kRingSimple), 2);
  EXPECT_GT(check_level_shifts(0.0f, 0.4f, kRingLL), 2);
}

// The shared part alone moves what every arm shows, and with it the cost of a call, but never which
// arm is best nor any loss: Ring/LL loses 12 / 10 - 1 = 0.2 on every call, whatever the level.
TEST(CallDynamics, ASharedLevelShiftMovesWhatIsObservedButNeverTheBestArmNorALoss) {
  EXPECT_EQ(check_level_shifts(0.3f, 0.0f, kRingLL), 0);
  SweepDynamics d;
  d.call.shift_rate = 0.02f;
  d.call.shift_size = 0.3f;
  const Trace tr = run_fixed(kRingLL, three_arms(d), 3000, 5);
  EXPECT_NEAR(tr.outcome.online_loss, 0.2, 1e-12);
  EXPECT_NEAR(tr.outcome.final_loss, 0.2, 1e-12);
  float lo = 1e30f, hi = 0.0f;
  for (float x : tr.observed) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_LT(lo, 12.0f * 0.85f);  // the levels spread over most of [0.7, 1.3]
  EXPECT_GT(hi, 12.0f * 1.15f);
}

// A rate of shifts too small to fire within the horizon leaves the replay exactly the static one.
TEST(CallDynamics, DynamicsThatNeverFireChangeNoBit) {
  SweepDynamics d;
  d.call.shift_rate = 1e-9f;
  d.call.shift_size = 0.3f;
  const Sweep dyn = three_arms(d), plain = three_arms(SweepDynamics{});
  ASSERT_TRUE(dyn.view().dynamic());
  ASSERT_FALSE(plain.view().dynamic());
  PolicyConfig eg;
  eg.kind = PolicyKind::kEpsGreedy;
  eg.eps = 0.3;
  for (int delay : {0, 3}) {
    const Trace a = run(eg, dyn, 500, delay), b = run(eg, plain, 500, delay);
    EXPECT_EQ(a.slots, b.slots);
    EXPECT_EQ(a.observed, b.observed);
    EXPECT_EQ(a.outcome.online_loss, b.outcome.online_loss);
  }
}

TEST(CallDynamics, TheCpuEngineAgreesWithReplayOneAtEveryThreadCount) {
  Sweep s = random_tiny_sweep(4, 12, true);
  s.set_dynamics(every_mechanism());
  ReplayJob job;
  job.sweep = &s;
  job.configs = {parse_policy_spec("ucb1:c=0.1,n0=1"), parse_policy_spec("greedy:n0=0")};
  job.seeds = 2;
  job.seed_base = 11;
  job.horizon = 300;
  job.delay = 4;
  job.keep_per_seed = true;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  job.threads = 1;
  const ReplayResults one = run_cpu_replay(job);
  job.threads = 2;
  const ReplayResults two = run_cpu_replay(job);
  ASSERT_EQ(one.online_per_seed.size(), two.online_per_seed.size());
  EXPECT_EQ(std::memcmp(one.online_per_seed.data(), two.online_per_seed.data(),
                        one.online_per_seed.size() * sizeof(double)),
            0);
  // (config 0, seed 0, context 0) is replay_one of the same task.
  ReplayTask task;
  task.sweep = s.view();
  task.context = 0;
  task.seed = 11;
  task.stream_id = context_stream_id(s.context(0));
  task.horizon = 300;
  task.delay = 4;
  const double direct =
      visit_policy(job.configs[0].config, [&](auto& p) { return replay_one(p, task).online_loss; });
  EXPECT_EQ(one.online_of(0, 0)[0], direct);
  EXPECT_GT(direct, 0.0);
}

TEST(CallDynamics, SurviveTheSweepCsvBitForBit) {
  const Sweep s = three_arms(every_mechanism());
  const std::string path = test::temp_dir() + "/roundtrip.csv";
  write_sweep_csv(s, path);  // the CSV and its side file
  const Sweep back = read_sweep_csv(path);
  EXPECT_TRUE(back.identical_to(s));
  EXPECT_FALSE(back.identical_to(three_arms(SweepDynamics{})));
}

// A dynamics line written before levels had a shared part has no shift_arm_size: its shift_size was
// each arm's own, and reads as that, so an older sweep replays as it did.
TEST(CallDynamics, AnOlderDynamicsLineKeepsItsPerArmShifts) {
  const std::string rows =
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n"
      "test,allreduce,1,8,1024,Ring,LL,0,10\n";
  std::stringstream older("# dynamics: shift_rate=0.01 shift_size=0.25\n" + rows);
  const CallDynamics a = parse_sweep_csv(older, "older.csv").dynamics().call;
  EXPECT_EQ(a.shift_size, 0.0f);
  EXPECT_EQ(a.shift_arm_size, 0.25f);
  std::stringstream newer("# dynamics: shift_rate=0.01 shift_size=0.25 shift_arm_size=0\n" + rows);
  const CallDynamics b = parse_sweep_csv(newer, "newer.csv").dynamics().call;
  EXPECT_EQ(b.shift_size, 0.25f);
  EXPECT_EQ(b.shift_arm_size, 0.0f);
}

TEST(CallDynamics, ABadDynamicsLineIsAnErrorWithItsLine) {
  const std::string rows =
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n"
      "test,allreduce,1,8,1024,Ring,LL,0,10\n";
  auto parse = [&](const std::string& head) {
    std::stringstream in(head + rows);
    return parse_sweep_csv(in, "bad.csv");
  };
  for (const char* line :
       {"# dynamics: job_warmup=-1\n", "# dynamics: shift_rate=1.5\n", "# dynamics: nonsense=1\n",
        "# dynamics: job_warmup\n", "# dynamics: job_warmup=0.1 job_warmup=0.2\n",
        "# dynamics: arm_warmup_calls=2.5\n", "# dynamics: shift_size=x\n",
        "# dynamics: shift_arm_size=1\n"}) {
    try {
      parse(line);
      ADD_FAILURE() << line;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.csv:1:"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse("# dynamics: job_warmup=0.1\n# dynamics: job_warmup=0.1\n"), InputError);
  EXPECT_FALSE(parse("# a comment\n").dynamics().any());
}
