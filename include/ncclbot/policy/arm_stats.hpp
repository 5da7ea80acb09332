#pragma once
// Per-arm running statistics with the prior as pseudo-observations (the pseudo-count warm start,
// docs/replay.md "Policies"): arm i starts with n0 pseudo-pulls at the prior's value mu0_i, so
//   N_i = n0 + n_i,  mean_i = (n0 * mu0_i + sum of observations) / N_i.
// Arms without a prior value (or n0 = 0, the cold start) start at N_i = 0. Observations may be
// transformed first (Thompson sampling keeps log-latencies); the prior gets the same transform.
#include <cmath>
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/host_double_pair.hpp"
#include "ncclbot/core/portable_math.hpp"
#include "ncclbot/policy/arm_set.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

// Smallest of x[0..n-1] (n >= 1, no NaN). min is exact, so any order of comparisons gives the same
// value, and short independent chains keep the step's critical path short. Each processor has its
// own way, both callable from host code so the host tests the GPU's (DevicePathsOnHost):
//   - the GPU (and nvcc's host compilations): four chains of scalars, merged with selects;
//   - the host build: two chains of pairs of doubles (core/host_double_pair.hpp).
NCCLBOT_HD inline double min_of_chains(const double* x, int n) {
  double m0 = x[0], m1 = x[0], m2 = x[0], m3 = x[0];
  int j = 1;
  for (; j + 3 < n; j += 4) {
    m0 = x[j] < m0 ? x[j] : m0;
    m1 = x[j + 1] < m1 ? x[j + 1] : m1;
    m2 = x[j + 2] < m2 ? x[j + 2] : m2;
    m3 = x[j + 3] < m3 ? x[j + 3] : m3;
  }
  for (; j < n; ++j) m0 = x[j] < m0 ? x[j] : m0;
  m0 = m1 < m0 ? m1 : m0;
  m2 = m3 < m2 ? m3 : m2;
  return m2 < m0 ? m2 : m0;
}

#if !defined(__CUDACC__)
inline double min_of_pairs(const double* x, int n) {
  HostDoublePair m0 = {x[0], x[0]}, m1 = m0;
  int j = 0;
  for (; j + 3 < n; j += 4) {
    const HostDoublePair a = load_pair(x + j), b = load_pair(x + j + 2);
    m0 = a < m0 ? a : m0;
    m1 = b < m1 ? b : m1;
  }
  m0 = m1 < m0 ? m1 : m0;
  double m = m0[1] < m0[0] ? m0[1] : m0[0];
  for (; j < n; ++j) m = x[j] < m ? x[j] : m;
  return m;
}
#endif

NCCLBOT_HD inline double min_of(const double* x, int n) {
#if defined(__CUDACC__)
  return min_of_chains(x, n);
#else
  return min_of_pairs(x, n);
#endif
}

// The first j with x[j] == min: the same arm as a strict-'<' scan in slot order (ties: lowest).
NCCLBOT_HD inline int first_index_of_min(const double* x, int n) {
  const double m = min_of(x, n);
  int j = 0;
  while (j < n - 1 && x[j] != m) ++j;
  return j;
}

enum class ObsScale : int8_t { kLinear, kLog };

template <int N>
struct ArmStatsT {
  ArmSetT<N> arms;
  double count[N];            // N_i, packed by arm index
  double sum[N];              // n0 * mu0_i + sum of (transformed) observations
  double mean[N];             // sum / count; unused while count == 0
  double total;               // sum of N_i
  int untried;                // arms with N_i == 0
  ArmIndexSet<N> prior_only;  // bit j: arm j's estimate is its prior alone, none of its latencies arrived
  int64_t plays;              // real observations so far: 64-bit, as a live policy may outlive 2^31 calls
                              // (members set by reset(), none initialised)

  NCCLBOT_HD static double transform(double x, ObsScale scale) {
    return scale == ObsScale::kLog ? portable_log(x) : x;
  }

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx, double n0, ObsScale scale) {
    arms.assign(ctx.mask);
    total = 0.0;
    untried = 0;
    prior_only.clear_all();
    plays = 0;
    for (int j = 0; j < arms.k; ++j) {
      const int s = arms.slot[j];
      if (n0 > 0.0 && has_prior_value(ctx, s)) {
        const double mu0 = transform(double(ctx.prior_us[s]), scale);
        prior_only.set(j);
        count[j] = n0;
        sum[j] = n0 * mu0;
        mean[j] = mu0;
      } else {
        count[j] = 0.0;
        sum[j] = 0.0;
        mean[j] = 0.0;
        ++untried;
      }
      total += count[j];
    }
  }

  // Adds one observation (already transformed) to packed arm j.
  NCCLBOT_HD void add(int j, double y) {
    if (count[j] == 0.0) --untried;
    prior_only.clear(j);
    count[j] += 1.0;
    sum[j] += y;
    mean[j] = sum[j] / count[j];
    total += 1.0;
    ++plays;
  }

  // The learned fields, for the tuner plugin's state file: f(values, n, lo, hi) for n values that
  // must lie in [lo, hi]. The packed arm set comes from the mask (reset), `untried` is recounted and
  // `prior_only` keeps the arms whose count is still reset()'s (a latency adds 1 to it).
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    double at_reset[N];
    for (int j = 0; j < arms.k; ++j) at_reset[j] = count[j];
    f(count, arms.k, 0.0, HUGE_VAL);
    for (int j = 0; j < arms.k; ++j)
      if (count[j] != at_reset[j]) prior_only.clear(j);
    f(sum, arms.k, -HUGE_VAL, HUGE_VAL);
    f(mean, arms.k, -HUGE_VAL, HUGE_VAL);
    f(&total, 1, 0.0, HUGE_VAL);
    f(&plays, 1, 0.0, 9.0e18);
    untried = 0;
    for (int j = 0; j < arms.k; ++j) untried += count[j] == 0.0 ? 1 : 0;
  }

  // First packed arm never observed (not even through the prior), or -1.
  NCCLBOT_HD int first_untried() const {
    for (int j = 0; j < arms.k; ++j)
      if (count[j] == 0.0) return j;
    return -1;
  }

  // Packed arm with the smallest mean among observed arms (ties: lowest slot), or -1.
  NCCLBOT_HD int argmin_mean() const {
    if (untried == 0 && arms.k > 0) return first_index_of_min(mean, arms.k);
    int best = -1;
    for (int j = 0; j < arms.k; ++j)
      if (count[j] > 0.0 && (best < 0 || mean[j] < mean[best])) best = j;
    return best;
  }

  // The cold start with decisions pending (policy_context.hpp), for policies that try every arm
  // first: an arm with a pull pending is no longer untried. The first arm with neither a pull nor one
  // pending; while every unobserved arm has one pending, the best observed arm, or with none observed
  // the fewest pulls (lowest slot). So a batch does not probe one arm over and over before its first
  // latency arrives. Packed index; call it with untried > 0.
  NCCLBOT_HD int cold_start_pending(const PendingPullsT<N>& pending) const {
    int fewest = 0;
    double fewest_pulls = HUGE_VAL;
    for (int j = 0; j < arms.k; ++j) {
      const double pulls = count[j] + double(pending.count[arms.slot[j]]);
      if (pulls == 0.0) return j;
      if (pulls < fewest_pulls) {
        fewest_pulls = pulls;
        fewest = j;
      }
    }
    const int best = argmin_mean();
    return best >= 0 ? best : fewest;
  }

  // Decisions pending once some latency has arrived (plays > 0): the arms whose estimate is still
  // the prior alone and that already have a pull pending. Undelayed, a policy sees an arm's first
  // latency before it pulls that arm again; pulling a prior-only arm once more before its first
  // latency arrives is a blind bet that the prior is right, repeated for a whole feedback delay when
  // the prior is wrong. Pending-aware policies pass such arms over (confidence_bound.hpp, greedy.hpp);
  // an arm whose latency arrived is never one, so some arm is always left. Before any latency
  // arrives nothing is measured, so nothing is passed over. A bit mask of packed indices.
  NCCLBOT_HD ArmIndexSet<N> blind_bets(const PendingPullsT<N>& pending) const {
    ArmIndexSet<N> bets = ArmIndexSet<N>::none();
    if (plays == 0) return bets;
    for (int j = 0; j < arms.k; ++j)
      if (prior_only.has(j) && pending.count[arms.slot[j]] > 0) bets.set(j);
    return bets;
  }

  // Packed arm with the smallest mean among observed arms not in `skip` (ties: lowest slot). With
  // skip = blind_bets(), some arm is left: plays > 0, so some arm's latency arrived.
  NCCLBOT_HD int argmin_mean_skipping(const ArmIndexSet<N>& skip) const {
    int best = -1;
    for (int j = 0; j < arms.k; ++j)
      if (count[j] > 0.0 && !skip.has(j) && (best < 0 || mean[j] < mean[best])) best = j;
    return best;
  }

  // Greedy's arm with decisions pending (greedy.hpp, and epsilon-greedy's greedy branch): the cold
  // start while some arm is untried, else the smallest mean passing over blind bets. Packed index.
  NCCLBOT_HD int greedy_pending(const PendingPullsT<N>& pending) const {
    if (untried > 0) return cold_start_pending(pending);
    const ArmIndexSet<N> skip = blind_bets(pending);
    return skip.empty() ? argmin_mean() : argmin_mean_skipping(skip);
  }

  // The slot a policy commits to when it stops learning: the smallest mean among observed arms
  // (ties: lowest slot), the first valid slot when none was observed, -1 when no arm is valid.
  NCCLBOT_HD int committed_slot() const {
    if (arms.k == 0) return -1;
    const int j = argmin_mean();
    return arms.slot[j < 0 ? 0 : j];
  }
};
using ArmStats = ArmStatsT<kNumArms>;

}  // namespace ncclbot
