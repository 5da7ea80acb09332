#pragma once
// `osub:c,n0`: OSUB (Combes and Proutière, "Unimodal bandits: regret lower bounds and optimal
// algorithms", ICML 2014, Algorithm 1) on the knob graph of knob_lattice.hpp, turned into a lower
// confidence bound for latencies as UCB1 is (ucb1.hpp: the bonus scaled by the best mean, c on that
// scale, the prior as n0 pseudo-pulls). At each call:
//   - the leader L is the arm with the smallest mean among the observed arms (ties: lowest index;
//     the first arm while none is observed), and l_L, the number of calls at which L was the leader,
//     grows by one;
//   - if (l_L - 1) is a multiple of gamma + 1 (gamma: the graph's largest degree), play L;
//   - else play, among L and its neighbours, an unobserved arm first (lowest index), else
//       argmin_j  mean_j - c * mean_L * sqrt(2 ln l_L) / sqrt(N_j)     (ties: lowest index).
// So it explores only around the current leader, with a bonus that grows with the leader's own count
// rather than with t: the paper's regret bound (Theorem 4.2) grows with the leader's neighbours, not
// with the number of arms, when the mean latency is unimodal on the graph. The paper's index is
// KL-UCB with ln l_L + c ln ln l_L; this is its Gaussian form without the ln ln term, the form UCB1
// takes here. Where the latencies are not unimodal on the graph (across algorithms and protocols
// nothing says they are), OSUB can settle on a local best: the knobs study measures how often that
// costs it.
//
// What the knob arms share: a knob arm's prior is its algorithm and protocol's (the cost model
// predicts no knob), and a prior that is wrong for NCCL's own knobs is wrong for the others too. So
// once the arm at NCCL's own channels and chunk size of an algorithm and protocol has a latency, every
// arm of that algorithm and protocol without a latency of its own takes that arm's mean as its prior
// value (still n0 pseudo-pulls): one measurement tells what the model got wrong for the whole
// family, instead of one per knob setting. The pseudo-pulls stay n0 per arm, so as in UCB1 with a
// prior they shift the estimates by a bounded amount that the arm's own latencies wash out.
// Committed arm: argmin of the means.
#include <cmath>
#include <cstdint>

#include "ncclbot/core/pow2.hpp"
#include "ncclbot/policy/confidence_bound.hpp"
#include "ncclbot/policy/knob_lattice.hpp"

namespace ncclbot {

template <int N>
struct OsubPolicyT {
  struct Params {
    double c;
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;
  KnobLatticeT<N> lattice;
  double leader_count[N];    // l_j: the calls at which arm j was the leader
  double inv_sqrt_count[N];  // 1 / sqrt(N_j), refreshed when N_j changes
  // The leader as a tournament over the packed arms, in argmin_mean()'s order (the observed arm with
  // the smallest mean, the lower index on a tie): leaf `leaves + j` is arm j (-1 while unobserved),
  // node n the better of nodes 2n and 2n + 1, node 1 the leader (leader()). A moved mean costs
  // O(log arms), not the scan argmin_mean() makes; the order is the same, so the leader is the same arm.
  static constexpr int kTournament = 2 * pow2_at_least(N);
  typename KnobLatticeT<N>::Index tournament[kTournament];
  int leaves;
  // The neighbours of arm `listed_for` (-1: none listed), listed when select() first meets it as the
  // leader, so that the calls it leads read a flat list rather than walk the lattice's links; an arm
  // with more than kListed neighbours is walked every call (listed_count -1). An engine cache, never
  // state: the graph is fixed at reset().
  static constexpr int kListed = 64;
  typename KnobLatticeT<N>::Index listed[kListed];
  int listed_count;
  int listed_for;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    lattice.assign(stats.arms, ctx.arms);
    for (int j = 0; j < stats.arms.k; ++j) {
      leader_count[j] = 0.0;
      inv_sqrt_count[j] = inv_sqrt_of(j);
    }
    build_tournament();
    listed_for = -1;
  }

  // stats.argmin_mean(): -1 while no arm is observed.
  NCCLBOT_HD int leader() const { return tournament[1]; }
  // 1 / sqrt(N_j), 0 for an arm never pulled.
  NCCLBOT_HD double inv_sqrt_of(int j) const {
    return stats.count[j] > 0.0 ? 1.0 / sqrt(stats.count[j]) : 0.0;
  }

  // The better of arms a and b (either -1: none) as argmin_mean() orders them.
  NCCLBOT_HD int better(int a, int b) const {
    if (a < 0) return b;
    if (b < 0) return a;
    return stats.mean[b] < stats.mean[a] || (stats.mean[b] == stats.mean[a] && b < a) ? b : a;
  }
  NCCLBOT_HD void build_tournament() {
    leaves = pow2_at_least(stats.arms.k);
    for (int j = 0; j < leaves; ++j)
      tournament[leaves + j] =
          typename KnobLatticeT<N>::Index(j < stats.arms.k && stats.count[j] > 0.0 ? j : -1);
    for (int n = leaves - 1; n >= 1; --n)
      tournament[n] = typename KnobLatticeT<N>::Index(better(tournament[2 * n], tournament[2 * n + 1]));
  }
  // Arm j's mean or count moved: its path to the root is played again.
  NCCLBOT_HD void replay_tournament(int j) {
    int n = leaves + j;
    tournament[n] = typename KnobLatticeT<N>::Index(stats.count[j] > 0.0 ? j : -1);
    for (n /= 2; n >= 1; n /= 2)
      tournament[n] = typename KnobLatticeT<N>::Index(better(tournament[2 * n], tournament[2 * n + 1]));
  }

  NCCLBOT_HD void list_neighbours(int at) {
    int n = 0;
    lattice.for_each_neighbour(at, [&](int j) {
      if (n < kListed) listed[n] = typename KnobLatticeT<N>::Index(j);
      ++n;
    });
    listed_count = n <= kListed ? n : -1;
    listed_for = at;
  }

  // f(j) for each neighbour j of the leader `at`, once each: from the list made when `at` first led,
  // or walking the lattice when it has more neighbours than the list holds.
  template <typename F>
  NCCLBOT_HD void for_each_neighbour_of(int at, F& f) {
    if (listed_for != at) list_neighbours(at);
    if (listed_count >= 0)
      for (int n = 0; n < listed_count; ++n) f(int(listed[n]));
    else
      lattice.for_each_neighbour(at, f);
  }

  NCCLBOT_HD int select(StepRandom&) {
    const int k = stats.arms.k;
    if (k == 0) return -1;
    const int at = leader() < 0 ? 0 : leader();
    const double l = leader_count[at] += 1.0;
    if (leader_turn(l)) return stats.arms.slot[at];
    // One pass over L's neighbours: the lowest unobserved index among L and them, else the index.
    // An arm is unobserved exactly where inv_sqrt_count is 0 (N_j = 0), so the pass reads two arrays.
    int unobserved = inv_sqrt_count[at] == 0.0 ? at : k;
    const double scale = params.c * stats.mean[at] * exploration_bonus(l);
    int best = at;
    double lowest = stats.mean[at] - scale * inv_sqrt_count[at];
    const auto consider = [&](int j) NCCLBOT_INLINE_LAMBDA {
      if (inv_sqrt_count[j] == 0.0) {
        if (j < unobserved) unobserved = j;
        return;
      }
      const double x = stats.mean[j] - scale * inv_sqrt_count[j];
      if (x < lowest || (x == lowest && j < best)) {
        best = j;
        lowest = x;
      }
    };
    // Each neighbour once; the answer does not depend on their order (ties go to the lowest index).
    for_each_neighbour_of(at, consider);
    if (unobserved < k) return stats.arms.slot[unobserved];
    return stats.arms.slot[best];
  }

  // Whether the leader's l-th call as leader is its own turn: (l - 1) a multiple of gamma + 1. In 32
  // bits while l allows (a 64-bit division costs several times a 32-bit one), the same answer.
  NCCLBOT_HD bool leader_turn(double l) const {
    const uint64_t turn = uint64_t(l) - 1, period = uint64_t(lattice.max_degree) + 1;
    if (turn <= UINT32_MAX) return uint32_t(turn) % uint32_t(period) == 0;
    return turn % period == 0;
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int j = stats.arms.index[slot];
    stats.add(j, latency_us);
    inv_sqrt_count[j] = inv_sqrt_of(j);
    replay_tournament(j);
    if (lattice.channels[j] == 0 && lattice.chunk[j] == 0) {  // NCCL's own knobs: its family (above)
      // Arms of one algorithm and protocol are contiguous in Arm order.
      int first = j, last = j;
      while (first > 0 && lattice.group[first - 1] == lattice.group[j]) --first;
      while (last + 1 < stats.arms.k && lattice.group[last + 1] == lattice.group[j]) ++last;
      for (int i = first; i <= last; ++i)
        if (i != j && stats.prior_only.has(i)) {
          stats.sum[i] = stats.count[i] * stats.mean[j];
          stats.mean[i] = stats.mean[j];
          replay_tournament(i);
        }
    }
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  // Learned fields (arm_stats.hpp) and the leaders' counts; the graph comes from the arms at reset().
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    f(inv_sqrt_count, stats.arms.k, 0.0, HUGE_VAL);
    f(leader_count, stats.arms.k, 0.0, 9.0e18);
    // Derived from the counts and means, which a state file may have restored: a file's own
    // inv_sqrt_count is never trusted to agree with its counts (select reads 0 as "unobserved").
    for (int j = 0; j < stats.arms.k; ++j) inv_sqrt_count[j] = inv_sqrt_of(j);
    build_tournament();
  }
};
using OsubPolicy = OsubPolicyT<kNumArms>;

}  // namespace ncclbot
