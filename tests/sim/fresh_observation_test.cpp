// A replay that draws afresh (core/observation_noise.hpp) draws from the simulator's own noise: the
// parameters come from sim::observation_noise, the draw from portable functions and another Philox
// stream, so the two agree in distribution, not in bits. Checked by a two-sample Kolmogorov-Smirnov
// test of 20,000 stored samples against 20,000 fresh draws per case: the statistic must stay below
// the 0.001-level critical value 1.949 sqrt(2 / 20000) = 0.0195 (the asymptotic Kolmogorov
// quantile). A fresh draw with sigma or a spike parameter off by a tenth fails it (checked below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ncclbot/core/observation_noise.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/simulator.hpp"

using namespace ncclbot;
using namespace ncclbot::sim;

namespace {

constexpr int kN = 20000;
constexpr double kCritical = 0.0195;

double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  size_t i = 0, j = 0;
  double d = 0.0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::fabs(double(i) / double(a.size()) - double(j) / double(b.size())));
  }
  return d;
}

std::vector<double> stored_samples(const FabricPreset& f, const Context& ctx, double truth) {
  std::vector<double> x;
  for (int r = 0; r < kN; ++r) x.push_back(sample_time_us(f, 3, ctx, 4, r, truth));
  return x;
}

std::vector<double> fresh_draws(const ObservationNoise& n, double truth) {
  std::vector<double> x;
  for (int t = 0; t < kN; ++t)
    x.push_back(fresh_latency(n, truth, philox_block(5, 77, uint32_t(t), kFreshObservationLane)));
  return x;
}

}  // namespace

TEST(FreshObservation, FollowsTheSimulatorsSamplesInDistribution) {
  const FabricPreset on = load_fabric("h100-ib-a");
  ASSERT_TRUE(on.observation.enabled);
  SynthOptions scaled;
  scaled.noise_scale = 4.0;  // more spikes, so their tail is tested too
  SynthOptions off;
  off.observation = false;
  for (const FabricPreset& f : {on, with_observation_options(on, scaled), with_observation_options(on, off)})
    for (uint64_t bytes : {uint64_t(1024), uint64_t(1) << 22}) {
      const Context ctx{f.name, Collective::kAllReduce, 2, 8, bytes};
      const ObservationNoise n = observation_noise(f, ctx);
      const std::vector<double> stored = stored_samples(f, ctx, 100.0);
      EXPECT_LT(ks_statistic(stored, fresh_draws(n, 100.0)), kCritical)
          << f.observation.enabled << " " << bytes;
      // The test has power: a tenth more noise is told apart.
      ObservationNoise wider = n;
      wider.sigma *= 1.1;
      wider.spike_prob *= 1.1;
      EXPECT_GT(ks_statistic(stored, fresh_draws(wider, 100.0)), kCritical)
          << f.observation.enabled << " " << bytes;
    }
}

// fresh_observations gives each context its own noise, scaled as the sweep's options say.
TEST(FreshObservation, EachContextGetsItsNoiseUnderTheSweepsOptions) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const std::vector<Context> ctxs = {{f.name, Collective::kAllReduce, 2, 8, 1024},
                                     {f.name, Collective::kAllReduce, 2, 8, uint64_t(1) << 30}};
  SynthOptions o;
  const std::vector<ObservationNoise> plain = fresh_observations(f, o, ctxs);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_GT(plain[0].sigma, plain[1].sigma);  // wider for small messages
  o.noise_scale = 0.0;
  for (const ObservationNoise& n : fresh_observations(f, o, ctxs)) {
    EXPECT_EQ(n.sigma, 0.0);
    EXPECT_EQ(n.spike_prob, 0.0);
  }
}
