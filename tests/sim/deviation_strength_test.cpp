// The strength of the structured deviations (SynthOptions::deviation_scale, docs/simulator.md
// "Deviation strength"): 1 is the preset's sweep bit for bit, 0 the neutral truth (the measured
// plateaus and no hidden deviation: the independent model at sigma 0), each drawn error scales
// with it and each factor is raised to its power, and AUTO's mean loss grows with it.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/replay/loss.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/knob_sweep.hpp"
#include "ncclbot/sim/simulator.hpp"

using namespace ncclbot;
using namespace ncclbot::sim;

namespace {

// h100-ib-a at 16 and 32 nodes, every sample its truth.
SynthOptions truth_options() {
  SynthOptions o;
  o.seed = 20260;
  o.nodes = {16, 32};
  o.samples = 1;
  o.noise_scale = 0.0;
  return o;
}

Sweep at_strength(double scale) {
  SynthOptions o = truth_options();
  o.deviation_scale = scale;
  return synthesize(load_fabric("h100-ib-a"), o);
}

// Whether the two sweeps' samples are the same bits at every context and arm.
bool same_samples(const Sweep& a, const Sweep& b) {
  const SweepView x = a.view(), y = b.view();
  if (x.num_contexts != y.num_contexts) return false;
  for (int c = 0; c < x.num_contexts; ++c)
    for (int s = 0; s < kNumArms; ++s) {
      const float p = x.sample(c, s, 0), q = y.sample(c, s, 0);
      if (!(p == q || (std::isnan(p) && std::isnan(q)))) return false;
    }
  return true;
}

double auto_mean_loss(const Sweep& sweep) {
  const SweepView v = sweep.view();
  double sum = 0.0;
  for (int c = 0; c < v.num_contexts; ++c) sum += relative_loss(v, c, auto_slot(v, c));
  return sum / v.num_contexts;
}

}  // namespace

TEST(DeviationStrength, OneIsThePresetsSweepAndZeroTheNeutralTruth) {
  EXPECT_TRUE(same_samples(at_strength(1.0), synthesize(load_fabric("h100-ib-a"), truth_options())));
  SynthOptions neutral = truth_options();
  neutral.deviations = DeviationModel::kIndependent;
  neutral.independent_sigma = 0.0;
  const Sweep none = synthesize(load_fabric("h100-ib-a"), neutral);
  EXPECT_TRUE(same_samples(at_strength(0.0), none));
  EXPECT_FALSE(same_samples(at_strength(1.0), none));
}

TEST(DeviationStrength, ErrorsScaleAndFactorsTakeItsPower) {
  const Deviations d = draw_deviations(load_fabric("h100-ib-a"), 20260);
  const Deviations two = scaled_deviations(d, 2.0);
  for (int s = 0; s < kNumNcclArms; ++s) {
    EXPECT_EQ(two.cap_error[s], 2.0 * d.cap_error[s]) << s;
    EXPECT_EQ(two.lat_error[s], 2.0 * d.lat_error[s]) << s;
  }
  EXPECT_DOUBLE_EQ(two.ll_bw, d.ll_bw * d.ll_bw);
  EXPECT_DOUBLE_EQ(two.ll128_bw, d.ll128_bw * d.ll128_bw);
  EXPECT_DOUBLE_EQ(two.ll128_lat, d.ll128_lat * d.ll128_lat);
  EXPECT_DOUBLE_EQ(two.slow_bw_factor, d.slow_bw_factor * d.slow_bw_factor);
  EXPECT_EQ(two.tree_congestion, 2.0 * d.tree_congestion);
  EXPECT_EQ(two.nvls_tree_overhead_us, 2.0 * d.nvls_tree_overhead_us);
  EXPECT_EQ(two.nvls_tree_bw_loss, 2.0 * d.nvls_tree_bw_loss);
  EXPECT_EQ(two.slow_slice_log2, d.slow_slice_log2);  // where the slow path sits is not a strength
}

TEST(DeviationStrength, AutosMeanLossGrowsWithIt) {
  double previous = -1.0;
  for (double scale : {0.0, 0.5, 1.0, 2.0}) {
    const double loss = auto_mean_loss(at_strength(scale));
    EXPECT_GT(loss, previous) << scale;
    previous = loss;
  }
}

TEST(DeviationStrength, IsRefusedWhereItDoesNotHold) {
  SynthOptions o = truth_options();
  o.deviation_scale = 4.5;
  EXPECT_THROW(synthesize(load_fabric("h100-ib-a"), o), UsageError);
  o.deviation_scale = -0.1;
  EXPECT_THROW(synthesize(load_fabric("h100-ib-a"), o), UsageError);
  o.deviation_scale = 0.5;
  o.deviations = DeviationModel::kAdversarial;
  EXPECT_THROW(synthesize(load_fabric("h100-ib-a"), o), UsageError);
  o.deviations = DeviationModel::kStructured;
  o.nodes = {2};
  EXPECT_THROW(synthesize_knobs(load_fabric("h100-ib-a"), o, parse_knob_spec("channels=0,8")), UsageError);
}
