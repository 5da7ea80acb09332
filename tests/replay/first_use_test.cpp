// An algorithm's first use paid once per communicator (replay/first_use.hpp): the call order, the
// grouping, hand-derived charges, and the engine against a literal walk of the documented call order.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/communicators.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/first_use.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "ncclbot/scale/shard.hpp"
#include "support/every_mechanism.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

constexpr int kTree = 0, kRing = 1;              // algorithms
constexpr int kTreeLLSlot = 0, kRingLLSlot = 3;  // their LL arms
constexpr uint64_t kKB = 1024, kMB = 1024 * 1024;

SweepDynamics first_use_only(double f_us) {
  SweepDynamics d;
  d.first_use_base_us = f_us;
  return d;
}

// One frozen config (a supervised selector's table): slot_of[c] on sweep context c.
ReplayJob frozen_job(const Sweep& s, const std::vector<int>& slot_of, int horizon) {
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  job.configs = {parse_policy_spec("knn")};
  job.fixed_slots = {slot_of};
  job.horizon = horizon;
  return job;
}

}  // namespace

// Three members (job contexts 4, 1, 2) of one (config, seed): each algorithm's communicator first
// use is its earliest call, ties to the member called first in an iteration, in call order.
//   member 0 (context 4): Tree at 5, Ring at 2    member 1 (context 1): Tree at 2, algo 3 at 0
//   member 2 (context 2): Ring at 2, algo 3 at 0
//   -> algo 3 (0, member 1), Ring (2, member 0), Tree (2, member 1).
TEST(FirstUse, CommunicatorFirstUsesComeInCallOrder) {
  std::vector<uint32_t> rows(5 * kNumAlgos, kNeverUsed);
  rows[4 * kNumAlgos + kTree] = 5;
  rows[4 * kNumAlgos + kRing] = 2;
  rows[1 * kNumAlgos + kTree] = 2;
  rows[1 * kNumAlgos + 3] = 0;
  rows[2 * kNumAlgos + kRing] = 2;
  rows[2 * kNumAlgos + 3] = 0;
  const int members[3] = {4, 1, 2};
  FirstUseEvent events[kNumAlgos];
  ASSERT_EQ(communicator_first_uses(rows.data(), members, 3, events), 3);
  EXPECT_EQ(events[0].t, 0u);
  EXPECT_EQ(events[0].member, 1);
  EXPECT_EQ(events[1].t, 2u);
  EXPECT_EQ(events[1].member, 0);
  EXPECT_EQ(events[2].t, 2u);
  EXPECT_EQ(events[2].member, 1);
  // Nothing used: no event.
  const std::vector<uint32_t> none(5 * kNumAlgos, kNeverUsed);
  EXPECT_EQ(communicator_first_uses(none.data(), members, 3, events), 0);
}

// Contexts group by (fabric, nodes, GPUs per node) in order of first appearance; m counts the
// distinct algorithms of the members' best arms.
TEST(FirstUse, CommunicatorsAreOneFabricNodesAndGpusEach) {
  const Sweep s = tiny_sweep({
      {tiny_context(2, kKB), {{kTreeLLSlot, {20.0f}, {}}, {kRingLLSlot, {10.0f}, {}}}},      // 2 nodes, Ring
      {tiny_context(4, kKB), {{kTreeLLSlot, {10.0f}, {}}, {kRingLLSlot, {20.0f}, {}}}},      // 4 nodes, Tree
      {tiny_context(2, kMB), {{kTreeLLSlot, {10.0f}, {}}, {kRingLLSlot, {20.0f}, {}}}},      // 2 nodes, Tree
      {tiny_context(2, kMB, Collective::kAllReduce, 4), {{kTreeLLSlot, {10.0f}, {}}}},       // 4 GPUs/node
      {tiny_context(2, 4 * kMB), {{kTreeLLSlot, {30.0f}, {}}, {kRingLLSlot, {20.0f}, {}}}},  // 2 nodes, Ring
  });
  // A sweep keeps its contexts in Context order (fabric, collective, nodes, GPUs per node, bytes):
  // 0 (2 nodes x 4 GPUs, 1M), 1 (2 x 8, 1K: Ring), 2 (2 x 8, 1M: Tree), 3 (2 x 8, 4M: Ring), 4 (4 x 8).
  ASSERT_EQ(s.context(0).gpus_per_node, 4);
  ASSERT_EQ(s.context(3).bytes, 4 * kMB);
  ASSERT_EQ(s.context(4).nodes, 4);
  std::vector<int> contexts;
  for (int c = 0; c < s.num_contexts(); ++c) contexts.push_back(c);
  const Communicators g = communicators_of(s, contexts);
  ASSERT_EQ(g.count(), 3);
  EXPECT_EQ(g.members, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g.begin, (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(g.connected, (std::vector<int>{1, 2, 1}));  // the 2 x 8 one: Ring, Tree, Ring
  // A job's own order is the call order: sweep contexts 4, 2, 1, 0 are job contexts 0, 1, 2, 3.
  const Communicators r = communicators_of(s, {4, 2, 1, 0});
  EXPECT_EQ(r.members, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.begin, (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(r.connected, (std::vector<int>{1, 2, 1}));
}

// Frozen decisions, F = 30 us, T = 10. Contexts A (2 nodes, 1 KB: Tree 10, Ring 20) and B (2 nodes,
// 1 MB: Tree 40, Ring 50) are one communicator; both best arms are Tree's, so m = 1. C (4 nodes:
// Tree 10, Ring 20) is a communicator of its own.
//   A plays Ring, B plays Tree: call 0 of A (the first call of the iteration) connects Ring, free;
//   call 0 of B connects Tree, the second algorithm: B pays 30/40 once -> B's online loss
//   0 + 0.75/10 = 0.075, though B plays its best arm; A's is 20/10 - 1 = 1.
//   A plays Tree, B plays Ring: B pays 30/40 -> 50/40 - 1 + 0.075 = 0.325; A 0.
//   C plays Ring: its communicator's first algorithm, free -> 1. (Per context, as before this rule,
//   no context pays: each plays one algorithm.)
TEST(FirstUse, TwoContextsOfOneCommunicatorPayForTheirSecondAlgorithmOnce) {
  Sweep s = tiny_sweep({
      {tiny_context(2, kKB), {{kTreeLLSlot, {10.0f}, {}}, {kRingLLSlot, {20.0f}, {}}}},
      {tiny_context(2, kMB), {{kTreeLLSlot, {40.0f}, {}}, {kRingLLSlot, {50.0f}, {}}}},
      {tiny_context(4, kKB), {{kTreeLLSlot, {10.0f}, {}}, {kRingLLSlot, {20.0f}, {}}}},
  });
  s.set_dynamics(first_use_only(30.0));
  const ReplayResults ab = run_cpu_replay(frozen_job(s, {kRingLLSlot, kTreeLLSlot, kRingLLSlot}, 10));
  EXPECT_NEAR(ab.online_at(0, 0), 1.0, 1e-12);
  EXPECT_NEAR(ab.online_at(0, 1), 0.075, 1e-12);
  EXPECT_NEAR(ab.online_at(0, 2), 1.0, 1e-12);
  const ReplayResults ba = run_cpu_replay(frozen_job(s, {kTreeLLSlot, kRingLLSlot, kRingLLSlot}, 10));
  EXPECT_NEAR(ba.online_at(0, 0), 0.0, 1e-12);
  EXPECT_NEAR(ba.online_at(0, 1), 0.325, 1e-12);
  // Both on the oracle's algorithm: nothing to pay.
  const ReplayResults best = run_cpu_replay(frozen_job(s, {kTreeLLSlot, kTreeLLSlot, kTreeLLSlot}, 10));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(best.online_at(0, i), 0.0) << i;
  // Without a first-use cost nothing couples the contexts.
  s.set_dynamics(SweepDynamics{});
  const ReplayResults free = run_cpu_replay(frozen_job(s, {kRingLLSlot, kTreeLLSlot, kRingLLSlot}, 10));
  EXPECT_NEAR(free.online_at(0, 1), 0.0, 1e-12);
}

// The communicator's first-use charges of the engine equal a literal walk of the documented call
// order (iteration t, then each member in job order; the set of connected algorithms; each one past
// the first m pays F / mu* of the calling context), for learning policies over 12 contexts on 4
// node counts, undelayed and on the leader's schedule. No level shifts here, so mu* is the best mean
// (best_cost_at with shifts is checked against an independent derivation in call_dynamics_test).
TEST(FirstUse, TheEngineChargesWhatALiteralWalkOfTheCallOrderCharges) {
  Sweep s = random_tiny_sweep(7, 12, true);
  SweepDynamics d = first_use_only(40.0);
  d.first_use_per_host_us = 5.0;
  d.call.arm_warmup = 0.3f;
  d.call.arm_warmup_calls = 3;
  s.set_dynamics(d);
  const SweepView v = s.view();
  for (const auto& [delay, window, start] : std::vector<std::tuple<int, int, int>>{{0, 1, 0}, {8, 4, 12}}) {
    ReplayJob job;
    job.sweep = &s;
    for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
    for (const char* spec : {"greedy:n0=0", "ucb1:c=0.2,n0=0", "thompson:n0=0", "random"})
      job.configs.push_back(parse_policy_spec(spec));
    job.seeds = 3;
    job.seed_base = 21;
    job.horizon = 40;
    job.delay = delay;
    job.window = window;
    job.policy_start = start;
    job.keep_per_seed = true;
    job.threads = 2;
    const ReplayResults r = run_cpu_replay(job);
    int charged = 0;
    for (size_t cfg = 0; cfg < job.configs.size(); ++cfg)
      for (int seed = 0; seed < job.seeds; ++seed) {
        // Every context's own replay: its slots and its loss without charges.
        std::vector<std::vector<int>> slots(job.contexts.size());
        std::vector<double> own(job.contexts.size());
        for (size_t i = 0; i < job.contexts.size(); ++i) {
          ReplayTask task = replay_task_of(job, cfg, i, context_stream_id(s.context(job.contexts[i])));
          task.seed = job.seed_base + uint64_t(seed);
          own[i] = visit_policy(job.configs[cfg].config, [&](auto p) {
                     return replay_one(p, task, [&](int, int slot, float) { slots[i].push_back(slot); });
                   }).online_loss;
        }
        for (int nodes = 1; nodes <= 4; ++nodes) {  // random_tiny_sweep: nodes 1 + c % 4, 8 GPUs each
          std::vector<size_t> members;
          std::set<int> oracle;
          for (size_t i = 0; i < job.contexts.size(); ++i)
            if (s.context(int(i)).nodes == nodes) {
              members.push_back(i);
              oracle.insert(best_slot(v, int(i)) / kNumProtos);
            }
          std::set<int> connected;
          std::vector<double> charge(job.contexts.size(), 0.0);
          for (int t = 0; t < job.horizon; ++t)
            for (size_t i : members) {
              const int algo = slots[i][size_t(t)] / kNumProtos;
              if (connected.insert(algo).second && connected.size() > oracle.size()) {
                charge[i] += (40.0 + 5.0 * nodes) / v.mean(int(i), best_slot(v, int(i))) / job.horizon;
                ++charged;
              }
            }
          for (size_t i : members)
            EXPECT_NEAR(r.online_of(int(cfg), seed)[i], own[i] + charge[i], 1e-12)
                << job.configs[cfg].text << " seed " << seed << " context " << i << " delay " << delay;
        }
      }
    EXPECT_GT(charged, 20);  // the cold policies connect several algorithms per communicator
    job.threads = 1;
    const ReplayResults one = run_cpu_replay(job);
    ASSERT_EQ(0, std::memcmp(one.online_per_seed.data(), r.online_per_seed.data(),
                             r.online_per_seed.size() * sizeof(double)));
  }
}

// Shards are dealt whole communicators, (config, communicator) blocks like cards, so any split gives
// the unsharded bits and no shard replays a unit of another: every unit in exactly one shard, and
// each shard's units of a config are whole communicators.
TEST(FirstUse, ShardsOfACoupledJobGiveTheUnshardedBits) {
  Sweep s = random_tiny_sweep(3, 10, true);
  s.set_dynamics(every_mechanism());
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const char* spec : {"greedy:n0=0", "ucb1:c=0.2,n0=0"}) job.configs.push_back(parse_policy_spec(spec));
  job.seeds = 2;
  job.horizon = 50;
  job.keep_per_seed = true;
  const ReplayResults whole = run_cpu_replay(job);
  const std::vector<std::vector<int>> groups = coupled_communicators(job);
  ASSERT_EQ(groups.size(), 4u);  // random_tiny_sweep: nodes 1 + c % 4
  for (int n = 2; n <= 4; ++n) {
    std::vector<int> dealt(job.configs.size() * job.contexts.size(), 0);
    for (int index = 0; index < n; ++index) {
      const ReplaySlice part = run_replay_units(job, ShardSpec{index, n}, ReplayBackend::kCpu);
      std::set<size_t> mine;
      for (size_t k = 0; k < part.units.size(); ++k) {
        ++dealt[part.units.unit(k)];
        mine.insert(part.units.unit(k));
      }
      for (size_t cfg = 0; cfg < job.configs.size(); ++cfg)
        for (const auto& g : groups) {
          size_t held = 0;
          for (int i : g) held += mine.count(cfg * job.contexts.size() + size_t(i));
          EXPECT_TRUE(held == 0 || held == g.size()) << "shard " << index << "/" << n;
        }
      for (size_t k = 0; k < part.units.size(); ++k) {
        const size_t unit = part.units.unit(k);
        ASSERT_TRUE(same_bits(part.online[k], whole.online[unit])) << "shard " << index << "/" << n;
        for (int seed = 0; seed < job.seeds; ++seed) {
          const size_t cfg = unit / job.contexts.size(), i = unit % job.contexts.size();
          ASSERT_TRUE(same_bits(part.online_per_seed[k * size_t(job.seeds) + size_t(seed)],
                                whole.online_of(int(cfg), seed)[i]));
        }
      }
    }
    for (int d : dealt) EXPECT_EQ(d, 1) << n << " shards";
  }
}
