#pragma once
// `thompson:n0,sigma`: Gaussian Thompson sampling on log-latency with known noise sigma (in log
// units: sigma = 0.1 is about 10% run-to-run spread). Observations y = ln(latency); the prior
// mu0_i = ln(prior_us_i) counts as n0 pseudo-observations, i.e. a N(mu0_i, sigma^2 / n0) prior
// (peers-bandits-stats.md §3: tau0^2 = sigma^2 / n0). Posterior of arm i: N(mean_i, sigma^2 / N_i)
// with N_i, mean_i from ArmStats on the log scale.
//   - if some arm has N_i = 0 (no prior, no data: improper), play the lowest such slot;
//   - else draw theta_i = mean_i + sigma * z_i / sqrt(N_i) for every valid arm in slot order,
//     z_i = normal_quantile(uniform_open01(w_i)) with w_i the step's i-th policy word, and play
//     argmin_i theta_i (ties: lowest slot).
// Committed arm: argmin of the posterior means (the arm with the smallest geometric-mean latency).
//
// Only the winner matters, so select() draws the arm with the smallest mean first and skips every
// arm that cannot beat the best draw so far: z >= kZFloor for every 32-bit word, so
// theta_i >= floor_i = mean_i + sigma * kZFloor / sqrt(N_i) (the same expression, and rounding is
// monotone), and an arm with floor_i > best theta can neither win nor tie. Arm i still reads word i
// of the step (StepRandom::word), so the pick is exactly the full draw's; most steps draw one or two
// arms instead of k. When even the best-mean arm's highest possible draw (kZCeil) is below every
// other arm's floor, it wins whatever the words say and nothing is drawn at all.
//
// Propensity (the decision log, docs/ope.md): 1 or 0 while it tries its arms; afterwards the
// probability that arm's draw is the smallest, an integral over the arms that can beat it
// (thompson_win_probability.hpp, error below 1e-9). contest() gathers those arms, so the plugin can
// keep them and compute the integral off its hot path.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"
#include "ncclbot/policy/thompson_win_probability.hpp"

namespace ncclbot {

struct ThompsonPolicy {
  struct Params {
    double n0;
    double sigma;
  };
  // Below normal_quantile(uniform_open01(w)) for every word w (the smallest, at w = 0, is -6.338).
  static constexpr double kZFloor = -6.5;
  // Above it for every word (the largest, at w = 2^32 - 1, is +6.338).
  static constexpr double kZCeil = 6.5;

  Params params;
  static constexpr bool kDeterministic = false;
  ArmStats stats;
  double lowest_draw[kNumArms];   // floor_i: no draw of arm i is lower; meaningful once N_i > 0
  double highest_draw[kNumArms];  // no draw of arm i is higher; meaningful once N_i > 0

  // Arm j's posterior draw at standard normal z. draw() and both bounds evaluate this one expression,
  // which is monotone in z under rounding: that is what makes the bounds exact.
  NCCLBOT_HD double draw_at(int j, double z) const {
    return stats.mean[j] + params.sigma * z / sqrt(stats.count[j]);
  }

  // The draw bounds are functions of arm j's mean and count alone, so recomputing them gives the
  // same bits as keeping them up to date.
  NCCLBOT_HD void refresh_bounds(int j) {
    lowest_draw[j] = stats.count[j] > 0.0 ? draw_at(j, kZFloor) : 0.0;
    highest_draw[j] = stats.count[j] > 0.0 ? draw_at(j, kZCeil) : 0.0;
  }

  NCCLBOT_HD void reset(const PolicyContext& ctx) {
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
    int pick = first_index_of_min(stats.mean, k);
    bool dominant = true;
    for (int j = 0; j < k && dominant; ++j) dominant = j == pick || lowest_draw[j] > highest_draw[pick];
    if (dominant) return stats.arms.slot[pick];
    double pick_theta = draw(pick, rng);
    for (int j = 0; j < k; ++j) {
      if (j == pick || lowest_draw[j] > pick_theta) continue;
      const double theta = draw(j, rng);
      if (theta < pick_theta || (theta == pick_theta && j < pick)) {
        pick = j;
        pick_theta = theta;
      }
    }
    return stats.arms.slot[pick];
  }

  // The arms whose draws decide whether `slot` wins, `slot` first: those whose lowest draw is not
  // above its highest. Only meaningful once every arm has N_i > 0 (no untried arm).
  NCCLBOT_HD void contest(int slot, ThompsonContest* out) const {
    const int a = stats.arms.index[slot];
    out->n = 0;
    out->sigma = params.sigma;
    const auto add = [&](int j) {
      out->mean[out->n] = stats.mean[j];
      out->count[out->n] = stats.count[j];
      ++out->n;
    };
    add(a);
    for (int j = 0; j < stats.arms.k; ++j)
      if (j != a && !(lowest_draw[j] > highest_draw[a])) add(j);
  }

  // select() and its propensity (policy_select_logged): 1 while trying arms or when no other arm
  // can win; otherwise the integral now, or, given `deferred`, NaN and the contest to compute it
  // from later.
  NCCLBOT_HD int select_logged(StepRandom& rng, double* probability, ThompsonContest* deferred) {
    const int slot = select(rng);
    *probability = 1.0;
    if (slot < 0 || stats.untried > 0) return slot;
    ThompsonContest local;
    ThompsonContest* c = deferred ? deferred : &local;
    contest(slot, c);
    if (c->n > 1) *probability = deferred ? __builtin_nan("") : thompson_win_probability(*c);
    return slot;
  }

  // The probability that select() returns `slot` in this state: deterministic while arms are
  // untried, then the win probability of its contest (0 when some arm always draws lower).
  NCCLBOT_HD double propensity(int slot) const {
    if (slot < 0 || slot >= kNumArms || stats.arms.index[slot] < 0) return 0.0;
    if (stats.untried > 0) return slot == stats.arms.slot[stats.first_untried()] ? 1.0 : 0.0;
    const int a = stats.arms.index[slot];
    for (int j = 0; j < stats.arms.k; ++j)
      if (highest_draw[j] < lowest_draw[a]) return 0.0;
    ThompsonContest c;
    contest(slot, &c);
    return thompson_win_probability(c);
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int j = stats.arms.index[slot];
    stats.add(j, ArmStats::transform(latency_us, ObsScale::kLog));
    refresh_bounds(j);
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    for (int j = 0; j < stats.arms.k; ++j) refresh_bounds(j);  // derived: rebuilt, never stored
  }
};

}  // namespace ncclbot
