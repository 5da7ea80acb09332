#pragma once
// `thompson:n0,sigma`: Gaussian Thompson sampling on log-latency with known noise sigma (in log
// units: sigma = 0.1 is about 10% run-to-run spread). Observations y = ln(latency); the prior
// mu0_i = ln(prior_us_i) counts as n0 pseudo-observations, i.e. a N(mu0_i, sigma^2 / n0) prior
// (the normal model with known variance: a N(mu0, tau0^2) prior with tau0^2 = sigma^2 / n0 weighs
// as n0 observations; Gelman et al., Bayesian Data Analysis). Posterior of arm i:
// N(mean_i, sigma^2 / N_i) with N_i, mean_i from ArmStats on the log scale.
//   - if some arm has N_i = 0 (no prior, no data: improper), play the lowest such slot;
//   - else draw theta_i = mean_i + z_i * s_i for every valid arm in slot order, with spread
//     s_i = sigma / sqrt(N_i), z_i = normal_quantile(uniform_open01(w_i)) and w_i the step's i-th
//     policy word, and play argmin_i theta_i (ties: lowest slot).
// Committed arm: argmin of the posterior means (the arm with the smallest geometric-mean latency).
//
// Only the winner matters, so select() starts from the arm with the smallest mean and skips every
// arm that cannot beat it: z >= kThompsonZFloor for every word, so theta_i >= floor_i =
// mean_i + kThompsonZFloor * s_i (the same expression, and rounding is monotone), and an arm whose
// floor is above the best draw's upper bound can neither win nor tie. When even the best-mean arm's
// highest possible draw is below every other arm's floor, it wins whatever the words say and nothing
// is drawn. On the CPU the remaining arms are first bounded by their word's bucket
// (normal_quantile_buckets.hpp), and the quantile is evaluated only for arms whose bounds reach
// below the smallest upper bound, usually none. Arm i always reads word i of the step
// (StepRandom::word), so the pick is exactly the full draw's on every backend.
//
// Propensity (the decision log, docs/ope.md): 1 or 0 while it tries its arms; afterwards the
// probability that arm's draw is the smallest, an integral over the arms that can beat it
// (thompson_win_probability.hpp, error below 1e-9). contest() copies the state the integral needs,
// so the plugin can keep it and compute the integral off its hot path.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"
#include "ncclbot/policy/normal_quantile_buckets.hpp"
#include "ncclbot/policy/thompson_win_probability.hpp"

namespace ncclbot {

template <int N>
struct ThompsonPolicyT {
  struct Params {
    double n0;
    double sigma;
  };
  static constexpr double kZFloor = kThompsonZFloor;
  static constexpr double kZCeil = kThompsonZCeil;

  Params params;
  static constexpr bool kDeterministic = false;
  ArmStatsT<N> stats;
  double spread[N];       // s_i = sigma / sqrt(N_i); meaningful once N_i > 0
  double lowest_draw[N];  // floor_i: no draw of arm i is lower; meaningful once N_i > 0

  // Arm j's posterior draw at standard normal z. draw() and both bounds evaluate this one expression,
  // which is monotone in z under rounding: that is what makes the bounds exact.
  NCCLBOT_HD double draw_at(int j, double z) const { return thompson_draw(stats.mean[j], spread[j], z); }
  NCCLBOT_HD double highest_draw(int j) const { return draw_at(j, kZCeil); }

  // Spread and floor are functions of arm j's mean and count alone, so recomputing them gives the
  // same bits as keeping them up to date.
  NCCLBOT_HD void refresh_bounds(int j) {
    spread[j] = stats.count[j] > 0.0 ? params.sigma / sqrt(stats.count[j]) : 0.0;
    lowest_draw[j] = stats.count[j] > 0.0 ? draw_at(j, kZFloor) : 0.0;
  }

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLog);
    for (int j = 0; j < stats.arms.k; ++j) refresh_bounds(j);
  }

  NCCLBOT_HD double draw(int j, StepRandom& rng) const {
    return draw_at(j, normal_quantile(uniform_open01(rng.word(uint32_t(j)))));
  }

  NCCLBOT_HD int select(StepRandom& rng) {
    const int k = stats.arms.k;
    if (k == 0) return -1;
    if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
    const int best = first_index_of_min(stats.mean, k);
    const ArmIndexSet<N> rivals = rivals_of(best);
    if (rivals.empty()) return stats.arms.slot[best];
#ifdef __CUDA_ARCH__
    return stats.arms.slot[select_by_drawing(rng, best)];
#else
    return stats.arms.slot[select_by_buckets(rng, best, rivals)];
#endif
  }

  // With decisions pending (policy_context.hpp): the cold start tries the arms without a pull pending
  // first (ArmStats::cold_start_pending), so a batch does not probe one untried arm over and over;
  // once every arm is observed each decision draws afresh from the posterior, as select() does.
  NCCLBOT_HD int select_pending(StepRandom& rng, const PendingPullsT<N>& pending) {
    if (stats.arms.k == 0 || stats.untried == 0) return select(rng);
    return stats.arms.slot[stats.cold_start_pending(pending)];
  }
  // select_pending() and its propensity: 1 in the cold start (deterministic), else select_logged()'s.
  NCCLBOT_HD int select_pending_logged(StepRandom& rng, const PendingPullsT<N>& pending, double* probability,
                                       ThompsonContestT<N>* deferred) {
    if (stats.arms.k == 0 || stats.untried == 0) return select_logged(rng, probability, deferred);
    *probability = 1.0;
    return stats.arms.slot[stats.cold_start_pending(pending)];
  }

  // The arms other than `best` (the best-mean arm) that could still win: those whose floor is not
  // above the best arm's highest draw, as a mask of packed arm indices.
  NCCLBOT_HD ArmIndexSet<N> rivals_of(int best) const {
    const double best_ceiling = highest_draw(best);
    ArmIndexSet<N> rivals = ArmIndexSet<N>::none();
    for (int j = 0; j < stats.arms.k; ++j)
      rivals.words[j >> 5] |= uint32_t(!(lowest_draw[j] > best_ceiling)) << (j & 31);
    rivals.clear(best);
    return rivals;
  }

  // The winner among arms that can still win, drawing each: the reference definition's pick (the
  // GPU's way; the host's is select_by_buckets(), and both give the same arm: DevicePathsOnHost).
  NCCLBOT_HD int select_by_drawing(StepRandom& rng, int best) const {
    const int k = stats.arms.k;
    int pick = best;
    double pick_theta = draw(best, rng);
    for (int j = 0; j < k; ++j) {
      if (j == best || lowest_draw[j] > pick_theta) continue;
      const double theta = draw(j, rng);
      if (theta < pick_theta || (theta == pick_theta && j < pick)) {
        pick = j;
        pick_theta = theta;
      }
    }
    return pick;
  }

#ifndef __CUDA_ARCH__
  // The same winner from the words' buckets: each candidate's draw lies in [lo_j, hi_j]; an arm whose
  // lo_j is above the smallest hi cannot win or tie, and when one arm is left it wins undrawn.
  int select_by_buckets(StepRandom& rng, int best, const ArmIndexSet<N>& rivals) const {
    const NormalQuantileBuckets& table = normal_quantile_buckets();
    int arm[N];
    uint32_t word[N];
    double lo[N];
    int n = 0;
    double ceiling = HUGE_VAL;  // the smallest upper bound so far
    const auto consider = [&](int j) {
      const uint32_t w = rng.word(uint32_t(j));
      const int b = NormalQuantileBuckets::bucket(w);
      const double l = draw_at(j, table.lo[b]);
      if (l > ceiling) return;
      const double h = draw_at(j, table.hi[b]);
      if (h < ceiling) ceiling = h;
      arm[n] = j;
      word[n] = w;
      lo[n] = l;
      ++n;
    };
    // The best-mean arm first (the tightest ceiling soonest), then its word block's other arms, then
    // the rest: StepRandom keeps one block, so each block is generated once.
    // Those of one word of the rival set whose floor is not above the ceiling.
    const auto consider_floored = [&](uint32_t arms, int first) {
      for (; arms != 0; arms &= arms - 1) {
        const int j = first + __builtin_ctz(arms);
        if (!(lowest_draw[j] > ceiling)) consider(j);
      }
    };
    consider(best);
    const int best_word = best >> 5;
    const uint32_t group = 15u << (best & 28);  // the four arms of best's word block, in its word
    consider_floored(rivals.words[best_word] & group, best_word * 32);
    for (int w = 0; w < ArmIndexSet<N>::kWords; ++w)
      consider_floored(w == best_word ? rivals.words[w] & ~group : rivals.words[w], w * 32);
    int pick = -1, left = 0;
    for (int i = 0; i < n; ++i)
      if (!(lo[i] > ceiling)) {
        pick = i;
        ++left;
      }
    if (left == 1) return arm[pick];
    double pick_theta = HUGE_VAL;
    pick = -1;
    for (int i = 0; i < n; ++i) {
      if (lo[i] > ceiling) continue;
      const double theta = draw_at(arm[i], normal_quantile(uniform_open01(word[i])));
      if (pick < 0 || theta < pick_theta || (theta == pick_theta && arm[i] < pick)) {
        pick = arm[i];
        pick_theta = theta;
      }
    }
    return pick;
  }
#endif

  // The state the propensity of `slot` is computed from (thompson_win_probability): every arm's
  // mean and spread, copied without a branch. Only meaningful once no arm is untried.
  NCCLBOT_HD void contest(int slot, ThompsonContestT<N>* out) const {
    const int k = stats.arms.k;
    out->n = k;
    out->played = stats.arms.index[slot];
    for (int j = 0; j < k; ++j) {
      out->mean[j] = stats.mean[j];
      out->spread[j] = spread[j];
    }
  }

  // select() and its propensity (policy_select_logged): 1 while trying arms or with one arm;
  // otherwise the integral now, or, given `deferred`, NaN and the contest to compute it from later.
  NCCLBOT_HD int select_logged(StepRandom& rng, double* probability, ThompsonContestT<N>* deferred) {
    const int slot = select(rng);
    *probability = 1.0;
    if (slot < 0 || stats.untried > 0 || stats.arms.k == 1) return slot;
    ThompsonContestT<N> local;
    ThompsonContestT<N>* c = deferred ? deferred : &local;
    contest(slot, c);
    *probability = deferred ? __builtin_nan("") : thompson_win_probability(*c);
    return slot;
  }

  // The probability that select() returns `slot` in this state: deterministic while arms are
  // untried, then the win probability of its contest (0 when some arm always draws lower).
  NCCLBOT_HD double propensity(int slot) const {
    if (slot < 0 || slot >= N || stats.arms.index[slot] < 0) return 0.0;
    if (stats.untried > 0) return slot == stats.arms.slot[stats.first_untried()] ? 1.0 : 0.0;
    ThompsonContestT<N> c;
    contest(slot, &c);
    return thompson_win_probability(c);
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    update_log(slot, ArmStatsT<N>::transform(latency_us, ObsScale::kLog));
  }
  // update() given the latency's log already (the CPU engine's precomputed sample logs).
  NCCLBOT_HD void update_log(int slot, double log_latency) {
    const int j = stats.arms.index[slot];
    stats.add(j, log_latency);
    refresh_bounds(j);
  }

  NCCLBOT_HD int commit(StepRandom&) const {
    return stats.committed_slot();
  }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    for (int j = 0; j < stats.arms.k; ++j) refresh_bounds(j);  // derived: rebuilt, never stored
  }
};
using ThompsonPolicy = ThompsonPolicyT<kNumArms>;

}  // namespace ncclbot
