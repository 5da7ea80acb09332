// fresh_latency (core/observation_noise.hpp) against closed forms of the distribution it draws from:
// the log-normal's moments and the Pareto spike's tail, P(U^(-1/alpha) > y) = y^(-alpha).
#include "ncclbot/core/observation_noise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace ncclbot;

namespace {

constexpr int kDraws = 200000;

std::vector<double> draws(const ObservationNoise& n, double truth) {
  std::vector<double> out;
  out.reserve(kDraws);
  for (int i = 0; i < kDraws; ++i)
    out.push_back(fresh_latency(n, truth, philox_block(7, 99, uint32_t(i), kFreshObservationLane)));
  return out;
}

double share(const std::vector<double>& x, bool (*pred)(double)) {
  int k = 0;
  for (double v : x) k += pred(v) ? 1 : 0;
  return double(k) / double(x.size());
}

// Binomial standard error of a share p over kDraws.
double se(double p) {
  return std::sqrt(p * (1.0 - p) / kDraws);
}

}  // namespace

// log(x / truth) ~ N(0, sigma^2): mean 0 and sd sigma within 5 standard errors (sd's se: sigma /
// sqrt(2 n)).
TEST(ObservationNoise, LogNormalHasTheStatedMoments) {
  ObservationNoise n;
  n.sigma = 0.2;
  const std::vector<double> x = draws(n, 50.0);
  double sum = 0.0, sq = 0.0;
  for (double v : x) {
    const double l = std::log(v / 50.0);
    sum += l;
    sq += l * l;
  }
  const double mean = sum / kDraws, sd = std::sqrt(sq / kDraws - mean * mean);
  EXPECT_NEAR(mean, 0.0, 5.0 * 0.2 / std::sqrt(double(kDraws)));
  EXPECT_NEAR(sd, 0.2, 5.0 * 0.2 / std::sqrt(2.0 * kDraws));
}

// Capped spikes, no log-normal noise: factor 1 with probability 0.7, else min(2 U^(-2/3), 10).
// P(factor > 4) = 0.3 (4/2)^-1.5 = 0.106066; P(factor = 10) = 0.3 (10/2)^-1.5 = 0.026833.
TEST(ObservationNoise, CappedSpikesHaveTheParetoTail) {
  ObservationNoise n;
  n.spike_prob = 0.3;
  n.spike_alpha = 1.5;
  n.spike_scale = 2.0;
  n.spike_cap = 10.0;
  const std::vector<double> x = draws(n, 1.0);
  EXPECT_NEAR(share(x, [](double v) { return v == 1.0; }), 0.7, 5 * se(0.7));
  EXPECT_NEAR(share(x, [](double v) { return v > 4.0; }), 0.106066, 5 * se(0.106066));
  EXPECT_NEAR(share(x, [](double v) { return v == 10.0; }), 0.026833, 5 * se(0.026833));
  EXPECT_EQ(share(x, [](double v) { return v > 10.0 || (v > 1.0 && v < 2.0); }), 0.0);
}

// The shifted form: 1 + min(0.2 (U^(-2/3) - 1), 20) on every call. P(factor > 1.2) = P(U^(-2/3) > 2)
// = 2^-1.5 = 0.353553; P(factor = 21) = P(U^(-2/3) > 101) = 101^-1.5 = 0.000985.
TEST(ObservationNoise, ShiftedSpikesHaveTheParetoTail) {
  ObservationNoise n;
  n.spike_prob = 1.0;
  n.spike_alpha = 1.5;
  n.spike_scale = 0.2;
  n.spike_cap = 20.0;
  n.shifted = 1;
  const std::vector<double> x = draws(n, 1.0);
  EXPECT_NEAR(share(x, [](double v) { return v > 1.2; }), 0.353553, 5 * se(0.353553));
  EXPECT_NEAR(share(x, [](double v) { return v == 21.0; }), 0.000985, 5 * se(0.000985));
  EXPECT_EQ(share(x, [](double v) { return v < 1.0 || v > 21.0; }), 0.0);
}

// No noise at all: the truth itself, whatever the words.
TEST(ObservationNoise, NoNoiseIsTheTruth) {
  for (uint32_t i = 0; i < 1000; ++i)
    EXPECT_EQ(fresh_latency(ObservationNoise{}, 123.25, philox_block(1, 2, i, kFreshObservationLane)),
              123.25);
}
