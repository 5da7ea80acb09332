#pragma once
// `uts:n0,sigma`: Unimodal Thompson Sampling (Paladino, Trovò, Marchesi and Restelli, "Unimodal
// Thompson Sampling for Graph-Structured Arms", AAAI 2017, Algorithm 1) on OSUB's knob graph
// (knob_lattice.hpp). It keeps OSUB's leader, its leader turns and its family prior (osub.hpp) and
// differs only in how it explores around the leader: by posterior draws instead of a confidence
// bonus. At each call:
//   - the leader L is the observed arm with the smallest mean (ties: lowest index; the first arm
//     while none is observed), and l_L grows by one;
//   - if (l_L - 1) is a multiple of gamma + 1 (gamma: the graph's largest degree), play L;
//   - else play, among L and its neighbours, an unobserved arm first (lowest index), else
//       argmin_j theta_j,  theta_j = mean_j * (1 + sigma * z_j / sqrt(N_j)),
//     z_j = normal_quantile(uniform_open01(w_j)) with w_j the step's j-th policy word (StepRandom::
//     word, so arm j's draw is the same whichever arms are drawn; ties: lowest index).
// The paper draws from Beta posteriors of Bernoulli rewards and proves the algorithm asymptotically
// optimal for unimodal bandits on a graph. Here the posterior is a Gaussian around the arm's mean
// latency with known relative noise sigma (sigma = 0.1: about 10% call-to-call spread, as in
// thompson.hpp, whose log-scale posterior it matches to first order), on the linear scale OSUB keeps
// its means on, and N_j counts the prior's n0 pseudo-pulls: an adaptation the paper's proof does not
// cover. Propensity: none in closed form (NaN in the decision log). Committed arm: argmin of the means.
#include "ncclbot/core/portable_math.hpp"
#include "ncclbot/policy/osub.hpp"

namespace ncclbot {

template <int N>
struct UtsPolicyT : OsubPolicyT<N> {
  using Base = OsubPolicyT<N>;
  struct Params {
    double n0;
    double sigma;
  };
  Params params;
  static constexpr bool kDeterministic = false;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    Base::params = {0.0, params.n0};  // OSUB's bonus is never used; its prior weight is
    Base::reset(ctx);
  }

  NCCLBOT_HD int select(StepRandom& rng) {
    const int k = this->stats.arms.k;
    if (k == 0) return -1;
    const int at = this->leader() < 0 ? 0 : this->leader();
    const double l = this->leader_count[at] += 1.0;
    if (this->leader_turn(l)) return this->stats.arms.slot[at];
    int unobserved = k, best = -1;
    double lowest = 0.0;
    const auto consider = [&](int j) NCCLBOT_INLINE_LAMBDA {
      if (this->inv_sqrt_count[j] == 0.0) {
        if (j < unobserved) unobserved = j;
        return;
      }
      if (unobserved < k) return;  // an unobserved arm is played: no draw matters
      const double z = normal_quantile(uniform_open01(rng.word(uint32_t(j))));
      const double theta = this->stats.mean[j] * (1.0 + params.sigma * z * this->inv_sqrt_count[j]);
      if (best < 0 || theta < lowest || (theta == lowest && j < best)) {
        best = j;
        lowest = theta;
      }
    };
    consider(at);
    this->for_each_neighbour_of(at, consider);
    return this->stats.arms.slot[unobserved < k ? unobserved : best];
  }
};
using UtsPolicy = UtsPolicyT<kNumArms>;

}  // namespace ncclbot
