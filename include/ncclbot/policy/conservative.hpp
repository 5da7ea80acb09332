#pragma once
// `@conservative:alpha,delta,noise,worst` after any policy spec: the policy runs as a conservative
// bandit (Wu, Shariff, Lattimore and Szepesvári, "Conservative Bandits", ICML 2016, Algorithm 2: the
// baseline's mean unknown and learned from its own pulls), with latencies as costs. The baseline b is
// NCCL's default setting: AUTO's algorithm and protocol at NCCL's own channels and chunk size
// (auto_policy.hpp). The promise: at every call t, with probability at least 1 - delta,
//     sum over calls s <= t of mu(a_s)  <=  (1 + alpha) * t * mu(b),
// the mean latency of what was played is at most 1 + alpha times what NCCL's default would have cost.
//
// Each call the wrapped policy proposes an arm j. j = b is played. Otherwise j is played only if the
// pessimistic cost of every non-baseline decision so far plus j still fits the budget:
//     U_j + sum over i != b of D_i * U_i  <=  ((1 + alpha) * t - D_b) * L_b,
// D_i the decisions of arm i so far (those whose latency has not arrived included), U_i and L_i an
// upper and a lower confidence bound on arm i's mean latency; else b is played. The baseline has no
// bound until its first latency arrives (L_b = 0), so the first call plays b.
//
// Two assumptions make the bounds (stated, not measured; `ncclbot replay --budget` reports both
// quantities of a sweep so they can be checked):
//   - `noise`: a latency lies within noise * mu of its arm's mean mu (then it is sub-Gaussian with
//     scale noise * mu, Hoeffding). With n latencies of arm i, mean m_i, K arms and
//         r_i = noise * sqrt(2 ln(pi^2 K t^3 / (3 delta)) / n),
//     |m_i - mu_i| <= r_i * mu_i for every arm and call with probability at least 1 - delta (a union
//     bound over arms, calls t and counts n <= t: sum_t K * t * 2 * 3 delta / (pi^2 K t^3) = delta),
//     so L_i = m_i / (1 + r_i) and m_i / (1 - r_i) bounds mu_i from above while r_i < 1;
//   - `worst`: no arm's mean is above worst * mu(b). Latencies are unbounded, so without such a bound
//     no arm could ever be tried: an arm with no latency yet (or r_i >= 1) has U_i = worst * U_b, and
//     every U_i is at most that.
// The wrapped policy learns from every latency, the baseline's included. The wrapper commits to the
// arm with the smallest mean of its own latencies (the baseline before any other has one). The
// replay engines run it on the CPU.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"
#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

struct ConservativeParams {
  double alpha = 0.05;  // the budget: at most 1 + alpha times the baseline's cumulative latency
  double delta = 0.05;  // the probability the promise may fail
  double noise = 0.1;   // assumed: a latency lies within noise * mu of its arm's mean (above)
  double worst = 10.0;  // assumed: no arm's mean is above worst * mu(b) (above)
};

template <typename Base, int N>
struct ConservativePolicyT {
  static constexpr int kArms = N;
  static constexpr bool kDeterministic = Base::kDeterministic;
  Base base;
  ConservativeParams params;
  ArmStatsT<N> seen;  // the observed latencies alone (no prior)
  double decided[N];  // D_i, packed
  double calls;       // t so far
  int baseline;       // b, packed
  double log_scale;   // ln(pi^2 K / (3 delta)), the call-independent part of the bound's log

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    base.reset(ctx);
    seen.reset(ctx, 0.0, ObsScale::kLinear);
    AutoPolicyT<N> nccl;
    nccl.reset(ctx);
    baseline = nccl.pick >= 0 ? seen.arms.index[nccl.pick] : 0;
    for (int j = 0; j < seen.arms.k; ++j) decided[j] = 0.0;
    calls = 0.0;
    constexpr double kPi = 3.14159265358979323846;
    log_scale = portable_log(kPi * kPi * double(seen.arms.k) / (3.0 * params.delta));
  }

  // noise * sqrt(2 ln(pi^2 K t^3 / (3 delta))): r_j at call t is this over sqrt(n_j).
  NCCLBOT_HD double spread(double t) const {
    return params.noise * sqrt(2.0 * (log_scale + 3.0 * portable_log(t)));
  }
  // r_j (above); HUGE_VAL while arm j has no latency.
  NCCLBOT_HD double radius(int j, double spread_t) const {
    return seen.count[j] == 0.0 ? HUGE_VAL : spread_t / sqrt(seen.count[j]);
  }
  // m_j / (1 - r_j) while r_j < 1, HUGE_VAL otherwise: the bound from arm j's own latencies.
  NCCLBOT_HD double upper_from_latencies(int j, double spread_t) const {
    const double r = radius(j, spread_t);
    return r < 1.0 ? seen.mean[j] / (1.0 - r) : HUGE_VAL;
  }
  // worst * U_b: what no arm's upper bound exceeds.
  NCCLBOT_HD double cap(double spread_t) const {
    return params.worst * upper_from_latencies(baseline, spread_t);
  }
  // U_j: the bound from its latencies, at most cap (worst * U_b, passed in so a loop computes it once).
  NCCLBOT_HD double upper(int j, double spread_t, double cap_t) const {
    const double own = upper_from_latencies(j, spread_t);
    return own < cap_t ? own : cap_t;
  }
  NCCLBOT_HD double upper(int j, double spread_t) const { return upper(j, spread_t, cap(spread_t)); }
  NCCLBOT_HD double lower(int j, double spread_t) const {
    const double r = radius(j, spread_t);
    return r == HUGE_VAL ? 0.0 : seen.mean[j] / (1.0 + r);
  }

  // Whether proposing packed arm j at call t (1-based) keeps the pessimistic cost within the budget.
  NCCLBOT_HD bool affordable(int j, double t) const {
    const double w = spread(t), most = cap(w);
    double cost = upper(j, w, most);
    for (int i = 0; i < seen.arms.k && cost < HUGE_VAL; ++i)
      if (i != baseline && decided[i] > 0.0) cost += decided[i] * upper(i, w, most);
    return cost <= ((1.0 + params.alpha) * t - decided[baseline]) * lower(baseline, w);
  }

  // The arm played for the wrapped policy's proposal `slot` (-1 only for an empty context).
  NCCLBOT_HD int guard(int slot) {
    if (slot < 0) return slot;
    const double t = calls + 1.0;
    int j = seen.arms.index[slot];
    if (j != baseline && !affordable(j, t)) j = baseline;
    decided[j] += 1.0;
    calls = t;
    return seen.arms.slot[j];
  }

  NCCLBOT_HD int select(StepRandom& rng) { return guard(base.select(rng)); }
  NCCLBOT_HD int select(StepRandom& rng, const SelectAids& aids) {
    return guard(select_with(base, rng, aids));
  }
  NCCLBOT_HD int select_pending(StepRandom& rng, const PendingPullsT<N>& pending) {
    return guard(select_pending_with(base, rng, SelectAids{}, pending));
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    base.update(slot, latency_us);
    seen.add(seen.arms.index[slot], latency_us);
  }

  // The arm with the smallest mean of its own latencies: the wrapped policy's committed arm may rest
  // on a prior it was never let to test.
  NCCLBOT_HD int commit(StepRandom&) const { return seen.committed_slot(); }
};

}  // namespace ncclbot
