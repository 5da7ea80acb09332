// OSUB (policy/osub.hpp) and its knob graph (policy/knob_lattice.hpp): neighbours written out by
// hand for a small knob grid, a trace worked by hand on three arms, and a walk on a unimodal
// 512-arm knob context checked against a leader recomputed here from what was observed.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <type_traits>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/knob_lattice.hpp"
#include "ncclbot/policy/osub.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"
#include "support/unimodal_knob_walk.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

constexpr int kN = 64;

// Ring/Simple at channels {0, 4, 8} x chunks {0, 128K, 512K}, a 256K chunk at channels 8 only, and
// Tree/LL at NCCL's own knobs and at (4, 128K): 12 arms, in Arm order (Tree first).
std::vector<Arm> grid_arms() {
  std::vector<Arm> arms = {{Algo::kTree, Proto::kLL, 0, 0}, {Algo::kTree, Proto::kLL, 4, 131072}};
  for (uint16_t ch : {0, 4, 8})
    for (uint32_t ck : {0u, 131072u, 262144u, 524288u})
      if (ck != 262144u || ch == 8) arms.push_back({Algo::kRing, Proto::kSimple, ch, ck});
  return arms;
}

int index_of(const std::vector<Arm>& arms, Arm a) {
  for (size_t i = 0; i < arms.size(); ++i)
    if (arms[i] == a) return int(i);
  return -1;
}

KnobLatticeT<kN> lattice_of(const std::vector<Arm>& arms) {
  ArmSetT<kN> set;
  ArmIndexSet<kN> mask = ArmIndexSet<kN>::none();
  for (size_t i = 0; i < arms.size(); ++i) mask.set(int(i));
  set.assign(mask);
  KnobLatticeT<kN> lattice;
  lattice.assign(set, arms.data());
  return lattice;
}

}  // namespace

// Each arm's neighbours, listed by hand from the rules in knob_lattice.hpp.
TEST(KnobLattice, NeighboursAreOneKnobStepOrTheSameKnobsElsewhere) {
  const std::vector<Arm> arms = grid_arms();
  ASSERT_EQ(arms.size(), 12u);
  const KnobLatticeT<kN> g = lattice_of(arms);
  const auto ring = [&](int ch, int ck) {
    return index_of(arms, {Algo::kRing, Proto::kSimple, uint16_t(ch), uint32_t(ck)});
  };
  const int tree0 = 0, tree4 = 1;
  const int K = 131072, H = 262144, M = 524288;
  // The neighbours select() visits, each once.
  const auto neighbours = [&](int i) {
    std::set<int> out;
    size_t visits = 0;
    g.for_each_neighbour(i, [&](int j) {
      out.insert(j);
      ++visits;
    });
    EXPECT_EQ(visits, out.size()) << "arm " << i << " visits a neighbour twice";
    return out;
  };
  // (4, 128K): channels 0 (NCCL's own, next to every count) and 8; chunks 0 and 512K (no 256K at 4
  // channels); Tree/LL at the same knobs.
  EXPECT_EQ(neighbours(ring(4, K)), (std::set<int>{ring(0, K), ring(8, K), ring(4, 0), ring(4, M), tree4}));
  // (8, 128K): 256K lies between 128K and 512K at 8 channels, so 512K is no neighbour.
  EXPECT_EQ(neighbours(ring(8, K)), (std::set<int>{ring(0, K), ring(4, K), ring(8, 0), ring(8, H)}));
  // NCCL's own knobs: every channel count at chunk 0, every chunk at channels 0, Tree/LL's own.
  EXPECT_EQ(neighbours(ring(0, 0)), (std::set<int>{ring(4, 0), ring(8, 0), ring(0, K), ring(0, M), tree0}));
  // Tree/LL's two arms differ in both knobs, so they are no neighbours: each reaches the other
  // through Ring/Simple.
  EXPECT_EQ(neighbours(tree0), (std::set<int>{ring(0, 0)}));
  EXPECT_EQ(neighbours(tree4), (std::set<int>{ring(4, K)}));
  // The relation is symmetric, and no arm is its own neighbour.
  for (int i = 0; i < int(arms.size()); ++i) {
    const std::set<int> of_i = neighbours(i);
    EXPECT_EQ(of_i.count(i), 0u) << i;
    for (int j = 0; j < int(arms.size()); ++j)
      EXPECT_EQ(of_i.count(j), neighbours(j).count(i)) << i << "," << j;
  }
  // The largest degree: (4, 128K) and (0, 0) have 5; (0, 128K) has (4, 128K), (8, 128K), (0, 0),
  // (0, 512K) and no Tree arm at (0, 128K): 4.
  EXPECT_EQ(g.max_degree, 5);
}

// Without knob arms every arm neighbours every other: one complete graph.
TEST(KnobLattice, ASlotContextIsOneCompleteGraph) {
  ArmSetT<kNumArms> set;
  ArmMask mask;
  for (int s : {0, 2, 5, 7}) mask.set(s);
  set.assign(mask);
  KnobLatticeT<kNumArms> g;
  g.assign(set, nullptr);
  EXPECT_EQ(g.max_degree, 3);
  for (int i = 0; i < 4; ++i) {
    std::multiset<int> visited;
    g.for_each_neighbour(i, [&](int j) { visited.insert(j); });
    std::multiset<int> others;
    for (int j = 0; j < 4; ++j)
      if (j != i) others.insert(j);
    EXPECT_EQ(visited, others) << "arm " << i;
  }
}

// Three arms with one sample each (10, 12, 20 µs), cold (n0 = 0), c = 0.1; gamma = 2. Worked by hand:
//   call 1: nothing observed, leader arm 0, l = 1: (1 - 1) mod 3 = 0, play the leader, slot 0;
//   calls 2, 3: leader 0 (10 µs), l = 2, 3: the untried neighbours in index order, slots 2 and 7;
//   call 4: l = 4, (4 - 1) mod 3 = 0: the leader;
//   call 5: l = 5, bonus 0.1 * 10 * sqrt(2 ln 5) = 1.794: indices 10 - 1.794 / sqrt(2) = 8.73,
//           12 - 1.794 = 10.21, 20 - 1.794 = 18.21: slot 0; call 6 likewise (8.91, 10.11, 18.11);
//   call 7: l = 7, (7 - 1) mod 3 = 0: the leader.
TEST(Osub, ThreeArmTraceWorkedByHand) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}, 9.0f}, {2, {12.0f}, 12.0f}, {7, {20.0f}, 15.0f}}}});
  PolicyConfig cfg = config_of(PolicyKind::kOsub);
  cfg.c = 0.1;
  cfg.n0 = 0.0;
  const Trace tr = trace_policy(cfg, s, 0, 7);
  EXPECT_EQ(tr.picks, (std::vector<int>{0, 2, 7, 0, 0, 0, 0}));
  EXPECT_EQ(tr.outcome.final_slot, 0);
}

// On a context unimodal on the knob graph (support/unimodal_knob_walk.hpp) every call plays the
// leader or one of its neighbours, and OSUB walks to the best arm, having tried far fewer than the
// 512 arms.
TEST(Osub, WalksAUnimodalKnobContextThroughNeighboursOnly) {
  OsubPolicyT<512> policy{};
  policy.params = {0.1, 0.0};
  std::vector<int> picks;
  const ReplayOutcome out = replay_knob_context(policy, unimodal_knob_context(), 3000, picks);
  EXPECT_LT(check_knob_walk(picks), 200u);
  EXPECT_EQ(out.final_slot, kUnimodalBestArm);
  EXPECT_EQ(out.final_loss, 0.0);
}

// Once the arm at NCCL's own knobs has a latency, the arms of its algorithm and protocol that have
// none take its mean as their prior value; an arm with a latency of its own keeps its mean, and other
// algorithms and protocols are untouched. Priors 50 µs, n0 = 1, by hand:
//   Ring/Simple (0, 0) sees 100: its mean (50 + 100) / 2 = 75, so (4, 0) and (8, 0) start at 75;
//   (4, 0) sees 80: (75 + 80) / 2 = 77.5;
//   (0, 0) sees 120: (50 + 100 + 120) / 3 = 90, so (8, 0) moves to 90 and (4, 0) stays at 77.5.
TEST(Osub, AFamilyShareTheLatencyOfItsArmAtNcclsOwnKnobs) {
  const std::vector<Arm> arms = {{Algo::kTree, Proto::kLL, 0, 0},
                                 {Algo::kTree, Proto::kLL, 4, 0},
                                 {Algo::kRing, Proto::kSimple, 0, 0},
                                 {Algo::kRing, Proto::kSimple, 4, 0},
                                 {Algo::kRing, Proto::kSimple, 8, 0}};
  PolicyContextT<kN> ctx;
  ctx.mask = ArmIndexSet<kN>::none();
  float prior[kN];
  for (int i = 0; i < 5; ++i) {
    ctx.mask.set(i);
    prior[i] = 50.0f;
  }
  ctx.prior_us = prior;
  ctx.arms = arms.data();
  OsubPolicyT<kN> p{};
  p.params = {0.1, 1.0};
  p.reset(ctx);
  p.update(2, 100.0);
  EXPECT_EQ(p.stats.mean[3], 75.0);
  EXPECT_EQ(p.stats.mean[4], 75.0);
  EXPECT_EQ(p.stats.count[4], 1.0);
  EXPECT_EQ(p.stats.mean[0], 50.0);
  EXPECT_EQ(p.stats.mean[1], 50.0);
  p.update(3, 80.0);
  EXPECT_EQ(p.stats.mean[3], 77.5);
  p.update(2, 120.0);
  EXPECT_EQ(p.stats.mean[2], 90.0);
  EXPECT_EQ(p.stats.mean[4], 90.0);
  EXPECT_EQ(p.stats.mean[3], 77.5);
  EXPECT_EQ(p.stats.mean[1], 50.0);
}

// A leader with more neighbours than OSUB lists (kListed) is walked on the lattice every call, and
// still offers every neighbour. Ring/Simple at NCCL's own knobs (0, 0) with channels 1..64 at NCCL's
// chunk and chunks 512 B .. 4 KiB at NCCL's channels: (0, 0) has 64 + 8 = 72 neighbours, every other
// arm at most 3, so gamma = 72. (0, 0) is the fastest (10 µs, the others 100 µs and more) and, with no
// prior (n0 = 0), stays the leader: call 1 is its turn (l = 1), calls 2..73 are its unobserved
// neighbours in index order (indices 1..72, Arm order: (0, 512 k) first, then (c, 0)), and call 74 is
// its turn again ((74 - 1) mod 73 = 0).
TEST(Osub, ALeaderWithMoreNeighboursThanItListsOffersThemAll) {
  SweepBuilder b("knobs.csv");
  const Context ctx{"h100", Collective::kAllReduce, 2, 8, 1 << 24};
  long line = 1;
  b.add(ctx, Arm{Algo::kRing, Proto::kSimple, 0, 0}, 0, 10.0f, 50.0f, line++);
  for (uint32_t k = 1; k <= 8; ++k)
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, 0, 512 * k}, 0, float(100 + k), 50.0f, line++);
  for (uint16_t c = 1; c <= 64; ++c)
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, c, 0}, 0, float(200 + c), 50.0f, line++);
  OsubPolicyT<128> policy{};
  policy.params = {0.1, 0.0};
  std::vector<int> picks;
  replay_knob_context(policy, b.build(), 74, picks);
  ASSERT_EQ(policy.lattice.max_degree, 72);
  ASSERT_GT(policy.lattice.max_degree, OsubPolicyT<128>::kListed);
  std::vector<int> expected = {0};
  for (int i = 1; i <= 72; ++i) expected.push_back(i);
  expected.push_back(0);
  EXPECT_EQ(picks, expected);
}

// What a state file restores is read through visit_state; the 1 / sqrt(N_j) cache that select() reads
// (0 meaning "unobserved") is recomputed from the restored counts, never taken from the file. A file
// that says arm 1 was pulled 4 times but carries 0 for its cache would otherwise leave arm 1
// "unobserved" for ever.
TEST(Osub, AStateFileCannotLeaveTheCountCacheDisagreeingWithTheCounts) {
  const std::vector<Arm> arms = {{Algo::kRing, Proto::kSimple, 0, 0}, {Algo::kRing, Proto::kSimple, 4, 0}};
  PolicyContextT<kN> ctx;
  ctx.mask = ArmIndexSet<kN>::none();
  ctx.mask.set(0);
  ctx.mask.set(1);
  ctx.arms = arms.data();
  OsubPolicyT<kN> p{};
  p.params = {0.1, 0.0};
  p.reset(ctx);
  p.visit_state([&](auto* field, int n, double, double) {
    if constexpr (std::is_same_v<decltype(field), double*>) {
      if (field == p.stats.count) field[1] = 4.0;
      if (field == p.stats.sum) field[1] = 40.0;
      if (field == p.stats.mean) field[1] = 10.0;
      if (field == p.inv_sqrt_count)
        for (int j = 0; j < n; ++j) field[j] = 0.0;
    }
  });
  EXPECT_EQ(p.inv_sqrt_count[1], 0.5);
  EXPECT_EQ(p.inv_sqrt_count[0], 0.0);  // never pulled
  EXPECT_EQ(p.leader(), 1);
}
