#include "ncclbot/stats/sign_flip_test.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/stats/resample_stream.hpp"

// Why compare flipped sums instead of recomputing T*: flipping the set F of units gives
// T*(F) = t - 2 S(F)/n with S(F) = sum of d_i over F. So T* >= t - gamma  <=>  S(F) <= n gamma / 2 and
// T* <= t + gamma  <=>  S(F) >= -n gamma / 2. The identity (F empty, S = 0) always counts on both sides,
// and S(F) is computed without cancelling against t.

namespace ncclbot {
namespace {

// All 2^k subset sums of `d`, each summed in index order of the bits (deterministic).
std::vector<double> subset_sums(std::span<const double> d) {
  std::vector<double> sums(size_t(1) << d.size());
  sums[0] = 0.0;
  for (size_t i = 0; i < d.size(); ++i) {
    const size_t half = size_t(1) << i;
    for (size_t s = 0; s < half; ++s) sums[half + s] = sums[s] + d[i];
  }
  return sums;
}

// #{(a, b): fl(low[a] + high[b]) <= limit}: fl(x + y) is monotone in each argument, so the a-prefix
// that qualifies shrinks as b grows over sorted lists.
uint64_t count_pairs_at_most(const std::vector<double>& low, const std::vector<double>& high, double limit) {
  uint64_t count = 0;
  size_t a = low.size();
  for (double h : high) {
    while (a > 0 && !(low[a - 1] + h <= limit)) --a;
    count += a;
  }
  return count;
}

uint64_t count_pairs_at_least(const std::vector<double>& low, const std::vector<double>& high, double limit) {
  uint64_t count = 0;
  size_t a = 0;  // first index of low that qualifies for the current (descending) h
  for (auto it = high.rbegin(); it != high.rend(); ++it) {
    while (a < low.size() && !(low[a] + *it >= limit)) ++a;
    count += low.size() - a;
  }
  return count;
}

double p_from_counts(Alternative alt, uint64_t greater, uint64_t less, double total, double adjustment) {
  const double p_greater = (double(greater) + adjustment) / (total + adjustment);
  const double p_less = (double(less) + adjustment) / (total + adjustment);
  double p = alt == Alternative::greater ? p_greater
             : alt == Alternative::less  ? p_less
                                         : 2.0 * std::min(p_less, p_greater);
  return std::clamp(p, 0.0, 1.0);
}

}  // namespace

bool sign_flip_enumerates(uint64_t units, PermutationMethod method, uint64_t resamples) {
  switch (method) {
    case PermutationMethod::exact:
      return true;
    case PermutationMethod::monte_carlo:
      return false;
    default:
      return units <= uint64_t(kSignFlipExactAutoMaxUnits) ||
             (units < 64 && (uint64_t(1) << units) <= resamples);
  }
}

SignFlipResult sign_flip_test(std::span<const double> d, const SignFlipOptions& opt) {
  if (d.empty()) throw std::invalid_argument("the sign-flip test needs at least one difference");
  double sum = 0.0;
  for (double v : d) {
    if (!std::isfinite(v)) throw std::invalid_argument("differences must be finite numbers");
    sum += v;
  }
  const size_t n = d.size();
  SignFlipResult r;
  r.statistic = sum / double(n);
  // SciPy's tie tolerance gamma = 100 eps |t| on the mean, rescaled to flipped sums (see above).
  const double gamma = 100.0 * std::numeric_limits<double>::epsilon() * std::abs(r.statistic);
  const double limit = double(n) * gamma / 2.0;

  if (opt.method == PermutationMethod::exact && n > size_t(kSignFlipExactMaxUnits))
    throw std::invalid_argument("exact sign-flip enumeration supports at most " +
                                std::to_string(kSignFlipExactMaxUnits) + " differences");
  const bool exact = sign_flip_enumerates(n, opt.method, opt.resamples);

  if (exact) {
    const size_t half = n / 2;
    std::vector<double> low = subset_sums(d.subspan(0, half));
    std::vector<double> high = subset_sums(d.subspan(half));
    std::sort(low.begin(), low.end());
    std::sort(high.begin(), high.end());
    r.count_greater = count_pairs_at_most(low, high, limit);
    r.count_less = count_pairs_at_least(low, high, -limit);
    r.exact = true;
    r.sign_vectors = uint64_t(1) << n;
    r.p_value = p_from_counts(opt.alternative, r.count_greater, r.count_less, double(r.sign_vectors), 0.0);
    return r;
  }

  if (opt.resamples == 0) throw std::invalid_argument("Monte Carlo sign-flip test needs resamples >= 1");
  std::atomic<uint64_t> greater{0}, less{0};
  parallel_for_chunks(opt.resamples, opt.threads, [&](uint64_t begin, uint64_t end) {
    uint64_t g = 0, l = 0;
    for (uint64_t b = begin; b < end; ++b) {
      ResampleStream stream(opt.seed, b, ResamplePurpose::sign_flips);
      double flipped = 0.0;
      for (size_t i = 0; i < n; i += 32) {
        const uint32_t bits = stream.next_word();
        const size_t stop = std::min(n, i + 32);
        for (size_t k = i; k < stop; ++k)
          if (bits >> (k - i) & 1u) flipped += d[k];
      }
      g += flipped <= limit;
      l += flipped >= -limit;
    }
    greater += g;
    less += l;
  });
  r.count_greater = greater;
  r.count_less = less;
  r.exact = false;
  r.sign_vectors = opt.resamples;
  r.p_value = p_from_counts(opt.alternative, r.count_greater, r.count_less, double(r.sign_vectors), 1.0);
  return r;
}

}  // namespace ncclbot
