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
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

struct ThompsonPolicy {
  struct Params {
    double n0;
    double sigma;
  };
  Params params;
  ArmStats stats;

  NCCLBOT_HD void reset(const PolicyContext& ctx) { stats.reset(ctx, params.n0, ObsScale::kLog); }

  NCCLBOT_HD int select(StepRandom& rng) {
    const int k = stats.arms.k;
    if (k == 0) return -1;
    if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
    int pick = -1;
    double pick_theta = 0.0;
    for (int j = 0; j < k; ++j) {
      const double z = normal_quantile(uniform_open01(rng.next_u32()));
      const double theta = stats.mean[j] + params.sigma * z / sqrt(stats.count[j]);
      if (pick < 0 || theta < pick_theta) {
        pick = j;
        pick_theta = theta;
      }
    }
    return stats.arms.slot[pick];
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    stats.add(stats.arms.index[slot], ArmStats::transform(latency_us, ObsScale::kLog));
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
  }
};

}  // namespace ncclbot
