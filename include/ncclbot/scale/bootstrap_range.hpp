#pragma once
// A bootstrap distribution computed in pieces, for splitting its resamples across processes.
// Resample b draws from its own stream ResampleStream(seed, b) (stats/resample_stream.hpp), so the
// pieces of any split, concatenated, are bit for bit the `distribution` bootstrap_interval() keeps
// (tests/scale/bootstrap_range_test.cpp checks it for every statistic); the interval is then
// taken on rank 0 by selection instead of a sort.
#include <cstdint>
#include <span>
#include <vector>

#include "ncclbot/stats/bootstrap.hpp"

namespace ncclbot {

// theta*_b for b in [first, first + count) of the one-sample bootstrap of `x` (statistic,
// threshold, seed and threads from `options`). `x` must satisfy bootstrap_interval()'s checks.
std::vector<double> bootstrap_distribution_range(std::span<const double> x, const BootstrapOptions& options,
                                                 uint64_t first, uint64_t count);

// Whether bootstrap_interval(x, options) is a percentile interval that a distribution computed
// elsewhere (other ranks, the device) can stand in for: method percentile, resamples and data
// present, a level in (0, 1), fewer than 2^32 finite values. Anything else runs as
// bootstrap_interval(), which also raises the library's errors.
bool percentile_interval_computable_elsewhere(std::span<const double> x, const BootstrapOptions& options);

// What bootstrap_interval(x, options) returns with method "percentile", given its whole
// distribution `theta` (all options.resamples of them, in resample order).
BootstrapResult percentile_interval_from_distribution(std::span<const double> x, std::vector<double> theta,
                                                      const BootstrapOptions& options);

}  // namespace ncclbot
