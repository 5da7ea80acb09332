// The simulator's alternative deviation models (sim::DeviationModel, docs/simulator.md "Deviation
// models"), checked against a neutral truth (the same model with size 0: the measured plateaus, no
// hidden deviation), with every sample the truth (noise scale 0):
//   - independent: log(truth / neutral) is normal with mean 0 and the asked sigma, and uncorrelated
//     with the cost model's prediction and with the preset's structured deviations;
//   - adversarial: only the model's own pick changes, by 1 + gain * min(gap, 1), the gap recomputed
//     here from the sweep's prior.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/knob_sweep.hpp"
#include "ncclbot/sim/simulator.hpp"

using namespace ncclbot;
using namespace ncclbot::sim;

namespace {

// h100-ib-a at `nodes` (empty: the preset's), every sample its truth.
Sweep truth_sweep(DeviationModel m, double sigma, double gain, std::vector<int> nodes = {16, 32}) {
  SynthOptions o;
  o.seed = 20260;
  o.nodes = std::move(nodes);
  o.samples = 1;
  o.noise_scale = 0.0;
  o.deviations = m;
  o.independent_sigma = sigma;
  o.adversarial_gain = gain;
  return synthesize(load_fabric("h100-ib-a"), o);
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

TEST(DeviationModels, IndependentFactorsAreLogNormalAndBlindToTheModel) {
  const double sigma = 0.3;
  const Sweep neutral = truth_sweep(DeviationModel::kIndependent, 0.0, 0.0);
  const Sweep independent = truth_sweep(DeviationModel::kIndependent, sigma, 0.0);
  const Sweep structured = truth_sweep(DeviationModel::kStructured, 0.0, 0.0);
  const SweepView n = neutral.view(), x = independent.view(), st = structured.view();
  std::vector<double> log_factor, log_prior, log_structured;
  for (int c = 0; c < n.num_contexts; ++c)
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (!n.mask(c).has(s)) continue;
      ASSERT_TRUE(x.mask(c).has(s));
      log_factor.push_back(std::log(double(x.sample(c, s, 0)) / double(n.sample(c, s, 0))));
      log_prior.push_back(std::log(double(n.prior(c, s))));
      log_structured.push_back(std::log(double(st.sample(c, s, 0)) / double(n.sample(c, s, 0))));
    }
  const double count = double(log_factor.size());
  ASSERT_GT(count, 500.0);
  double mean = 0, var = 0;
  for (double v : log_factor) mean += v / count;
  for (double v : log_factor) var += (v - mean) * (v - mean) / (count - 1);
  // Five standard errors: of the mean sigma / sqrt(n), of the standard deviation about sigma / sqrt(2n).
  EXPECT_NEAR(mean, 0.0, 5 * sigma / std::sqrt(count));
  EXPECT_NEAR(std::sqrt(var), sigma, 5 * sigma / std::sqrt(2 * count));
  // Uncorrelated with the model's prediction and with the structured deviations: |r| within five
  // standard errors of 0 (1 / sqrt(n)).
  EXPECT_LT(std::abs(correlation(log_factor, log_prior)), 5 / std::sqrt(count));
  EXPECT_LT(std::abs(correlation(log_factor, log_structured)), 5 / std::sqrt(count));
  // The structured deviations, for contrast, are not blind to the model: they are not all 1.
  double spread = 0;
  for (double v : log_structured) spread = std::max(spread, std::abs(v));
  EXPECT_GT(spread, 0.05);
}

TEST(DeviationModels, AdversarialSlowsOnlyTheModelsPickByItsConfidence) {
  const double gain = 0.8;
  // Every node count of the preset: on one node the model's gap exceeds 1 for small messages.
  const Sweep neutral = truth_sweep(DeviationModel::kAdversarial, 0.0, 0.0, {});
  const Sweep adversarial = truth_sweep(DeviationModel::kAdversarial, 0.0, gain, {});
  const SweepView n = neutral.view(), a = adversarial.view();
  int capped = 0;
  for (int c = 0; c < n.num_contexts; ++c) {
    // The model's pick and its confidence, from the prior the sweep stores (ties to the lower slot).
    int pick = -1;
    for (int s = 0; s < kNumNcclArms; ++s)
      if (n.mask(c).has(s) && (pick < 0 || n.prior(c, s) < n.prior(c, pick))) pick = s;
    ASSERT_GE(pick, 0);
    double second = 0;
    for (int s = 0; s < kNumNcclArms; ++s)
      if (n.mask(c).has(s) && s != pick && (second == 0 || n.prior(c, s) < second)) second = n.prior(c, s);
    const double gap = second > 0 ? second / double(n.prior(c, pick)) - 1.0 : 0.0;
    capped += gap > 1.0;
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (!n.mask(c).has(s)) continue;
      const double expected = s == pick ? 1.0 + gain * std::min(gap, 1.0) : 1.0;
      // The samples are floats: the ratio holds to their rounding.
      EXPECT_NEAR(double(a.sample(c, s, 0)) / double(n.sample(c, s, 0)), expected, 3e-7 * expected)
          << "context " << c << " slot " << s;
    }
  }
  EXPECT_GT(capped, 0);  // the cap at a gap of 1 is reached somewhere, so it is checked
}

TEST(DeviationModels, TheAlternativesAreRefusedWhereTheyDoNotHold) {
  EXPECT_THROW(parse_deviation_model("random"), UsageError);
  EXPECT_EQ(parse_deviation_model("adversarial"), DeviationModel::kAdversarial);
  SynthOptions o;
  o.nodes = {2};
  o.deviations = DeviationModel::kIndependent;
  EXPECT_THROW(synthesize_knobs(load_fabric("h100-ib-a"), o, parse_knob_spec("channels=0,8")), UsageError);
  o.independent_sigma = 3.0;
  EXPECT_THROW(synthesize(load_fabric("h100-ib-a"), o), UsageError);
}
