#pragma once
// The probability that one arm's Thompson draw is the smallest (the propensity the decision log
// records for Thompson sampling, docs/ope.md). Arm i draws theta_i = m_i + s_i z_i with independent
// standard normal z_i, so the played arm (index 0 here) wins with probability
//   P = integral phi(z) prod_{j >= 1} Q((m_0 + s_0 z - m_j) / s_j) dz,   Q(x) = erfc(x / sqrt 2) / 2,
// a one-dimensional integral with no closed form beyond two arms. It is computed by 8-point
// Gauss-Legendre quadrature on panels of z in [-kZLimit, z_hi] (the draw's z never leaves
// [-6.338, 6.338]: kThompsonZFloor/kThompsonZCeil; z_hi is where some arm's factor falls below
// 1e-17): panels at most kGrid wide, and around each arm whose factor is a step narrower than
// that (width w_j = s_j / s_0 in z, centred at c_j = (m_j - m_0) / s_0), panel ends at
// c_j + {0, +-1, +-2, +-4, +-8} w_j, so every panel sees a smooth integrand. Stated error: below
// 1e-9 in absolute terms against the continuous normal (checked against the two-arm closed form
// Phi((m_1 - m_0) / sqrt(s_0^2 + s_1^2)), the symmetric 1/K and a Monte Carlo in
// tests/policy/thompson_win_probability_test.cpp); the draws themselves are 2^32-point quantiles
// of the normal, which shifts a probability by less than 1e-9 more. Ties between draws have
// probability below 2^-32 and are ignored.
// Arms whose lowest draw is above the played arm's highest never beat it and leave the integral;
// when some arm's highest draw is below the played arm's lowest, the probability is exactly 0.
#include <cmath>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

// Below normal_quantile(uniform_open01(w)) for every 32-bit word w (the smallest, at w = 0, is
// -6.338), and above it (the largest, at w = 2^32 - 1, is +6.338).
inline constexpr double kThompsonZFloor = -6.5;
inline constexpr double kThompsonZCeil = 6.5;

// An arm's Thompson draw at standard normal z. Monotone in z under rounding (a product with a
// positive spread, then a sum), so the draw at kThompsonZFloor / kThompsonZCeil bounds every draw.
NCCLBOT_HD inline double thompson_draw(double mean, double spread, double z) {
  return mean + z * spread;
}

// A Thompson sampling state as its decision saw it: arm i draws mean[i] + z_i * spread[i]
// (spread = sigma / sqrt(N_i) > 0). The whole state, so that gathering it is a plain copy; which
// arms can take part is decided when the probability is computed.
template <int N>
struct ThompsonContestT {
  int n = 0;       // arms
  int played = 0;  // the arm whose probability of winning is asked
  double mean[N];
  double spread[N];
};
using ThompsonContest = ThompsonContestT<kNumArms>;

namespace thompson_detail {

inline constexpr double kZLimit = 6.4;
inline constexpr double kGrid = 0.5;
inline constexpr double kStepWidths[9] = {-8, -4, -2, -1, 0, 1, 2, 4, 8};
// Panel ends for a contest of up to N arms.
template <int N>
inline constexpr int kMaxPoints = 2 + int(2 * kZLimit / kGrid) + 1 + 9 * N;

// The arms that decide the contest, played arm first: m[j], and sd[j] = s_j * sqrt(2) for j >= 1
// (erfc's scale), sd[0] = s_0.
template <int N>
struct Rivals {
  int n;
  double m[N];
  double s[N];
  double sd[N];
};

template <int N>
NCCLBOT_HD double integrand(const Rivals<N>& r, double z) {
  const double theta = r.m[0] + r.sd[0] * z;
  double f = 0.3989422804014327 * exp(-0.5 * z * z);
  for (int j = 1; j < r.n && f > 0.0; ++j) f *= 0.5 * erfc((theta - r.m[j]) / r.sd[j]);
  return f;
}

// 8-point Gauss-Legendre on [a, b].
template <int N>
NCCLBOT_HD double gauss_legendre8(const Rivals<N>& r, double a, double b) {
  constexpr double x[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363};
  constexpr double w[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763};
  const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
  double sum = 0.0;
  for (int i = 0; i < 4; ++i)
    sum += w[i] * (integrand(r, mid - half * x[i]) + integrand(r, mid + half * x[i]));
  return sum * half;
}

}  // namespace thompson_detail

// P(the played arm draws the smallest theta), within 1e-9 (see above); in [0, 1].
template <int N>
NCCLBOT_HD double thompson_win_probability(const ThompsonContestT<N>& c) {
  using namespace thompson_detail;
  const int a = c.played;
  const double top = thompson_draw(c.mean[a], c.spread[a], kThompsonZCeil);
  const double bottom = thompson_draw(c.mean[a], c.spread[a], kThompsonZFloor);
  Rivals<N> r;
  r.n = 1;
  r.m[0] = c.mean[a];
  r.s[0] = c.spread[a];
  r.sd[0] = c.spread[a];
  for (int j = 0; j < c.n; ++j) {
    if (j == a) continue;
    if (thompson_draw(c.mean[j], c.spread[j], kThompsonZCeil) < bottom) return 0.0;  // always lower
    if (thompson_draw(c.mean[j], c.spread[j], kThompsonZFloor) > top) continue;      // never lower
    r.m[r.n] = c.mean[j];
    r.s[r.n] = c.spread[j];
    r.sd[r.n] = c.spread[j] * 1.4142135623730951;
    ++r.n;
  }
  if (r.n <= 1) return 1.0;
  const double* s = r.s;
  const double lo = -kZLimit;
  double hi = kZLimit;
  for (int j = 1; j < r.n; ++j) {
    const double cut = (r.m[j] - r.m[0] + 8.5 * s[j]) / s[0];  // Q(8.5) < 1e-17
    if (cut < hi) hi = cut;
  }
  if (!(hi > lo)) return 0.0;
  double points[kMaxPoints<N>];
  int n = 0;
  points[n++] = lo;
  points[n++] = hi;
  for (double z = lo + kGrid; z < hi; z += kGrid) points[n++] = z;
  for (int j = 1; j < r.n; ++j) {
    const double width = s[j] / s[0];
    if (!(width < kGrid)) continue;
    const double centre = (r.m[j] - r.m[0]) / s[0];
    for (double k : kStepWidths) {
      const double z = centre + k * width;
      if (z > lo && z < hi) points[n++] = z;
    }
  }
  for (int i = 1; i < n; ++i)  // insertion sort: a few dozen points
    for (int k = i; k > 0 && points[k] < points[k - 1]; --k) {
      const double t = points[k];
      points[k] = points[k - 1];
      points[k - 1] = t;
    }
  double p = 0.0;
  for (int i = 0; i + 1 < n; ++i)
    if (points[i + 1] > points[i]) p += gauss_legendre8(r, points[i], points[i + 1]);
  return p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
}

}  // namespace ncclbot
