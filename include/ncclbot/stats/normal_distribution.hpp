#pragma once
// Standard normal CDF and quantile from Boost.Math, extended to the IEEE edge cases the BCa formulas
// run into (Phi^-1(0) = -inf, Phi(+-inf) = 1 or 0, NaN stays NaN) instead of Boost's default throwing.
// The quantile has its own name: the policies' normal_quantile (core/portable_math.hpp) is a
// different function, and one name for both would let a build link either.
namespace ncclbot {

double normal_cdf(double z);       // P(Z <= z)
double normal_sf(double z);        // P(Z > z), accurate in the upper tail
double normal_quantile_ieee(double p);  // z with P(Z <= z) = p; -inf at 0, +inf at 1, NaN outside [0,1]

}  // namespace ncclbot
