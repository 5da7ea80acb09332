#pragma once
// The block bootstrap of the off-policy estimators and of telemetry (docs/ope.md): within each
// logged context its blocks (ope/log_blocks.hpp) are drawn with replacement, as many as it has,
// each block keeping its calls in time order (the non-overlapping block bootstrap, Carlstein 1986,
// Annals of Statistics 14(3)); contexts are resampled independently, since a log's calls per
// context are fixed by the job, not drawn. The draws are the statistics engine's
// (bootstrap_column_means, stats/bootstrap.hpp): resample b of context x comes from the stream
// (context_seed(seed, x), b) only, so any thread count gives the same numbers.
#include <cstdint>
#include <span>
#include <vector>

namespace ncclbot {

// The seed of context x's resamples.
uint64_t context_seed(uint64_t seed, size_t x);

// For k columns of one value per block ([k][blocks], one column after another), each column's
// sum over the blocks drawn by resamples 0 .. resamples - 1: out[b * k + c].
std::vector<double> block_bootstrap_sums(std::span<const double> columns, size_t k, uint64_t seed,
                                         int resamples, unsigned threads);

}  // namespace ncclbot
