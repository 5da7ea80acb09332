#pragma once
// One context's call-to-call noise as parameters, and a latency drawn afresh from it: what a replay
// observes on a sweep whose observations are drawn per call (SweepView::fresh) instead of picked
// from its few stored samples. The simulator fills the parameters from its observation model
// (sim::observation_noise, docs/simulator.md "Observation model"), so a fresh draw follows the same
// distribution as a stored sample; the draw itself uses only the portable functions
// (core/portable_math.hpp), so the CPU engine and the CUDA kernels observe the same bits.
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/portable_math.hpp"

namespace ncclbot {

// A latency observed on one call is truth * exp(sigma * z), z standard normal, and with probability
// spike_prob also times a Pareto spike of tail index spike_alpha:
//   capped (the observation model):  min(spike_scale * U^(-1/alpha), spike_cap)
//   shifted (the older [noise] form): 1 + min(spike_scale * (U^(-1/alpha) - 1), spike_cap)
struct ObservationNoise {
  double sigma = 0.0;
  double spike_prob = 0.0;
  double spike_alpha = 1.0;
  double spike_scale = 1.0;
  double spike_cap = 1.0;
  int32_t shifted = 0;  // 1: the shifted form
  int32_t unused = 0;
  bool operator==(const ObservationNoise&) const = default;
};
static_assert(std::is_trivially_copyable_v<ObservationNoise>, "copied to the device as bytes");

// The Philox lane of a replay step's fresh observation (core/philox.hpp): its own, so drawing afresh
// moves none of the policy's, the sample draw's, the watch rule's or the call dynamics' words.
inline constexpr uint32_t kFreshObservationLane = 0x0B5E0000u;

// A spike's factor from its Pareto draw U^(-1/alpha), in either form above: the one definition the
// simulator's stored samples (libm's pow for the draw) and the replay's fresh draws (portable) share.
NCCLBOT_HD inline double spike_factor(const ObservationNoise& n, double pareto) {
  if (n.shifted) {
    const double extra = n.spike_scale * (pareto - 1.0);
    return 1.0 + (extra < n.spike_cap ? extra : n.spike_cap);
  }
  const double factor = n.spike_scale * pareto;
  return factor < n.spike_cap ? factor : n.spike_cap;
}

// A latency around `truth` from the four words of one Philox block: z from word 0 (normal quantile
// of a uniform), the spike's coin from word 1 and its size from word 2.
NCCLBOT_HD inline double fresh_latency(const ObservationNoise& n, double truth, const Philox4x32& words) {
  double t = truth;
  if (n.sigma > 0.0) t *= portable_exp(n.sigma * normal_quantile(uniform_open01(words.v[0])));
  if (n.spike_prob > 0.0 && uniform_open01(words.v[1]) < n.spike_prob)
    t *= spike_factor(n, portable_pow_positive(uniform_open01(words.v[2]), -1.0 / n.spike_alpha));
  return t;
}

}  // namespace ncclbot
