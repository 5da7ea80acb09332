#include "ncclbot/stats/resample_p99.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ncclbot/stats/resample_stream.hpp"
#include "resample_means_x4.hpp"

namespace ncclbot {

PercentileSpot::PercentileSpot(size_t m) {
  const double pos = 0.99 * double(m - 1);
  lo = size_t(std::floor(pos));
  hi = std::min(lo + 1, m - 1);
  frac = pos - double(lo);
}

namespace {

// Draws resample b's n units and appends to kept those with keep[u] (every one when All), without
// a branch: the slot is written always and the count moves only for a kept unit. Returns the count.
template <bool All>
size_t draw_kept(uint32_t n, uint64_t seed, uint64_t b, const uint8_t* keep, uint32_t* kept) {
  ResampleStream stream(seed, b, ResamplePurpose::bootstrap_indices);
  size_t count = 0;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t u[4];
    stream.next4_below(n, u);
    for (int l = 0; l < 4; ++l) {
      kept[count] = u[l];
      count += All ? 1 : keep[u[l]];
    }
  }
  for (; i < n; ++i) {
    const uint32_t u = stream.next_below(n);
    kept[count] = u;
    count += All ? 1 : keep[u];
  }
  return count;
}

// The p99 of v over the kept draws, counting those whose rank is at least first_rank and walking
// down from the top; nothing when fewer of them than the walk needs lie there.
std::optional<double> p99_of_kept(const RankedValues& v, size_t first_rank, std::span<const uint32_t> kept,
                                  const PercentileSpot& spot, std::vector<uint32_t>& by_rank) {
  const size_t n = v.sorted.size();
  by_rank.assign(n - first_rank, 0u);
  for (uint32_t u : kept) {
    const uint32_t r = v.position_of[u];
    if (r >= first_rank) ++by_rank[r - first_rank];
  }
  const size_t want_hi = n - 1 - spot.hi, want_lo = n - 1 - spot.lo;  // descending ranks, want_hi <= want_lo
  double at_hi = std::numeric_limits<double>::quiet_NaN();
  size_t seen = 0;
  for (size_t r = n; r-- > first_rank;) {
    const uint32_t c = by_rank[r - first_rank];
    if (c == 0) continue;
    seen += c;
    if (std::isnan(at_hi) && seen > want_hi) at_hi = v.sorted[r];
    if (seen > want_lo) return spot.interpolate(v.sorted[r], at_hi);
  }
  return std::nullopt;
}

}  // namespace

ResampleP99::ResampleP99(RankedValues x, std::optional<RankedValues> y, size_t region)
    : x_(x), y_(y), spot_(x.sorted.size()) {
  const size_t n = x.sorted.size();
  const size_t want_lo = n - 1 - spot_.lo;
  // The walk needs want_lo + 1 draws in the region; about `region` land there on average, so twice
  // that plus 64 leaves the redo to a deviation of many standard deviations.
  if (region == 0) region = 2 * (want_lo + 1) + 64;
  first_rank_ = n - std::min(region, n);
  keep_.resize(n);
  for (size_t u = 0; u < n; ++u)
    keep_[u] = x.position_of[u] >= first_rank_ || (y && y->position_of[u] >= first_rank_);
}

double ResampleP99::from_kept(uint64_t seed, uint64_t b, uint32_t* slots, size_t drawn,
                              std::vector<uint32_t>& by_rank) const {
  std::span<const uint32_t> kept(slots, drawn);
  std::optional<double> px = p99_of_kept(x_, first_rank_, kept, spot_, by_rank);
  std::optional<double> py = y_ ? p99_of_kept(*y_, first_rank_, kept, spot_, by_rank) : 0.0;
  if (!px || !py) {  // too few draws in the region: every draw, every rank
    const uint32_t n = uint32_t(x_.sorted.size());
    kept = std::span<const uint32_t>(slots, draw_kept<true>(n, seed, b, nullptr, slots));
    px = p99_of_kept(x_, 0, kept, spot_, by_rank);
    py = y_ ? p99_of_kept(*y_, 0, kept, spot_, by_rank) : 0.0;
  }
  return y_ ? *px - *py : *px;
}

void ResampleP99::run(uint64_t seed, uint64_t first, uint64_t count, double* theta) const {
  const uint32_t n = uint32_t(x_.sorted.size());
  std::vector<uint32_t> kept(4 * size_t(n)), by_rank;
  const auto one = [&](uint64_t k) {
    const size_t drawn = draw_kept<false>(n, seed, first + k, keep_.data(), kept.data());
    theta[k] = from_kept(seed, first + k, kept.data(), drawn, by_rank);
  };
  // Four resamples at a time in SIMD lanes where the CPU has them; a group with a rejected draw is
  // redone one resample at a time.
  const SimdLevel simd = n >= 4 ? simd_level() : SimdLevel::none;
  uint64_t k = 0;
  if (simd != SimdLevel::none)
    for (; k + 4 <= count; k += 4) {
      size_t drawn[4];
      if (!resample_kept_x4(simd, keep_, seed, first + k, kept.data(), drawn)) {
        for (uint64_t r = 0; r < 4; ++r) one(k + r);
        continue;
      }
      for (uint64_t r = 0; r < 4; ++r)
        theta[k + r] = from_kept(seed, first + k + r, kept.data() + r * n, drawn[r], by_rank);
    }
  for (; k < count; ++k) one(k);
}

}  // namespace ncclbot
