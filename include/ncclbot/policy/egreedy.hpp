#pragma once
// `egreedy:eps,decay,n0`: epsilon-greedy with fixed or decaying exploration rate
//   eps_t = eps / (1 + decay * t),  t = real plays so far  (decay = 0: fixed eps; decay = 1:
//   roughly eps / t, the 1/t decay of the epsilon_n-greedy of Auer, Cesa-Bianchi and Fischer,
//   Machine Learning 47, 2002).
// Each step draws two policy words: u = uniform_open01(w0), w1. If u < eps_t it explores,
// a_t = arm[uniform_below(w1, K)]; otherwise it plays greedy's choice (greedy.hpp: untried arms
// first, then argmin of the prior-warmed means). Committed arm: argmin of the means. Over knob
// arms the host finds the smallest mean through per-block minima (arm_blocks.hpp): the same arm.
#include "ncclbot/policy/arm_blocks.hpp"

namespace ncclbot {

template <int N>
struct EpsGreedyPolicyT {
  struct Params {
    double eps;
    double decay;
    double n0;
  };
  Params params;
  ArmStatsT<N> stats;
  [[no_unique_address]] ArmBlocksT<N> blocks;  // derived from mean, used where kUsed
  static constexpr bool kDeterministic = false;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.build(stats);
  }
  NCCLBOT_HD int select(StepRandom& rng) {
    bool explored = false;
    return choose(rng, explored);
  }
  // select() and the probability of its answer (the decision log's path in the plugin): a greedy
  // step knows its probability without another argmin; only an exploring one asks propensity().
  NCCLBOT_HD int select_logged(StepRandom& rng, double* probability) {
    bool explored = false;
    const int slot = choose(rng, explored);
    *probability = slot < 0 ? 0.0 : explored ? propensity(slot) : greedy_probability();
    return slot;
  }
  // P(select() = slot) in this state: min(eps_t, 1) / K for exploring plus the rest for greedy's
  // choice (exact up to the 2^-32 granularity of the two uniform draws).
  NCCLBOT_HD double propensity(int slot) const {
    if (stats.arms.k == 0) return 0.0;
    return stats.arms.slot[greedy_index(nullptr)] == slot ? greedy_probability()
                                                          : explore_rate() / double(stats.arms.k);
  }
  // With decisions pending (policy_context.hpp): the greedy branch takes greedy's pending rule
  // (ArmStats::greedy_pending: its cold start, and no blind bets); the exploring branch is
  // unchanged. The same two words as select().
  NCCLBOT_HD int select_pending(StepRandom& rng, const PendingPullsT<N>& pending) {
    bool explored = false;
    return choose(rng, explored, &pending);
  }
  // select_pending() and the probability of its answer: min(eps_t, 1) / K for exploring, plus the
  // rest when it is the greedy branch's arm.
  NCCLBOT_HD int select_pending_logged(StepRandom& rng, const PendingPullsT<N>& pending,
                                       double* probability) {
    bool explored = false;
    const int slot = choose(rng, explored, &pending);
    if (slot < 0) {
      *probability = 0.0;
      return slot;
    }
    const bool greedy_arm = slot == stats.arms.slot[greedy_index(&pending)];
    *probability = greedy_arm ? greedy_probability() : explore_rate() / double(stats.arms.k);
    return slot;
  }
  NCCLBOT_HD void update(int slot, double latency_us) {
    const int j = stats.arms.index[slot];
    stats.add(j, latency_us);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.refresh(stats, j);
  }
  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.build(stats);
  }

 private:
  NCCLBOT_HD double eps_now() const { return params.eps / (1.0 + params.decay * double(stats.plays)); }
  NCCLBOT_HD double explore_rate() const { return eps_now() > 1.0 ? 1.0 : eps_now(); }
  NCCLBOT_HD double greedy_probability() const {
    const double e = explore_rate();
    return e / double(stats.arms.k) + (1.0 - e);
  }
  // The greedy branch's arm (packed index): untried arms first, then the smallest mean; with
  // decisions pending, greedy's pending rule.
  NCCLBOT_HD int greedy_index(const PendingPullsT<N>* pending) const {
    if (pending && pending->total > 0) return stats.greedy_pending(*pending);
    if (stats.untried > 0) return stats.first_untried();
    if constexpr (ArmBlocksT<N>::kUsed) return blocks.argmin_mean(stats);
    return stats.argmin_mean();
  }
  NCCLBOT_HD int choose(StepRandom& rng, bool& explored, const PendingPullsT<N>* pending = nullptr) {
    if (stats.arms.k == 0) return -1;
    const double u = uniform_open01(rng.next_u32());
    const uint32_t w1 = rng.next_u32();
    explored = u < eps_now();
    if (explored) return stats.arms.slot[uniform_below(w1, uint32_t(stats.arms.k))];
    return stats.arms.slot[greedy_index(pending)];
  }
};
using EpsGreedyPolicy = EpsGreedyPolicyT<kNumArms>;

}  // namespace ncclbot
