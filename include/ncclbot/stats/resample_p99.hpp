#pragma once
// The p99 of bootstrap resamples (linear interpolation at position 0.99 (n - 1), as
// percentile_linear) read from the few draws that can matter. The p99 of n draws is set by the
// ~n/100 largest of them, so only draws of units whose rank lies in a top region of the sorted
// order are kept (branch-free, into a short list), counted by rank and walked from the top. Should
// fewer of them land in the region than the walk needs (a few standard deviations below its
// expected count with the default region), the resample is redone keeping every draw. Either way
// the interpolated order statistics are the same values, so the result is bit for bit the p99 of
// the sorted resample.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ncclbot {

// Where the 99th percentile of m values sits: the same arithmetic as quantile_linear_sorted.
struct PercentileSpot {
  size_t lo, hi;  // ascending ranks interpolated between
  double frac;
  explicit PercentileSpot(size_t m);
  double interpolate(double at_lo, double at_hi) const { return at_lo + (at_hi - at_lo) * frac; }
};

// One sample's values in sorted order: sorted ascending, position_of[u] the rank of unit u.
struct RankedValues {
  std::span<const double> sorted;
  std::span<const uint32_t> position_of;
};

class ResampleP99 {
 public:
  // The p99 of x's resamples, or when y is given the p99 of x's minus that of y's (the same drawn
  // units). region: how many top ranks are watched, 0 for the default 2 (k + 1) + 64 with
  // k = n - 1 - floor(0.99 (n - 1)), the descending rank the walk must reach.
  ResampleP99(RankedValues x, std::optional<RankedValues> y, size_t region = 0);

  // theta[k] for resample first + k, k < count, resample b drawing n units with
  // ResampleStream(seed, b, bootstrap_indices).next_below(n). Safe to call from several threads.
  void run(uint64_t seed, uint64_t first, uint64_t count, double* theta) const;

 private:
  // Resample b's value from the units it drew that keep_ keeps, slots[0, drawn); slots has room for
  // n, which the redo with every draw uses.
  double from_kept(uint64_t seed, uint64_t b, uint32_t* slots, size_t drawn,
                   std::vector<uint32_t>& by_rank) const;

  RankedValues x_;
  std::optional<RankedValues> y_;
  PercentileSpot spot_;
  size_t first_rank_;          // the watched region is ranks [first_rank_, n)
  std::vector<uint8_t> keep_;  // keep_[u]: unit u's rank lies in the region (in x or y)
};

}  // namespace ncclbot
