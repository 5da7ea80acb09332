#pragma once
// The block bootstrap of the off-policy estimators and of telemetry (docs/ope.md): within each
// logged context its blocks (ope/log_blocks.hpp) are drawn with replacement, as many as it has,
// each block keeping its calls in time order (the non-overlapping block bootstrap, Carlstein 1986,
// Annals of Statistics 14(3)); contexts are resampled independently, since a log's calls per
// context are fixed by the job, not drawn. The draws are the statistics engine's
// (bootstrap_column_means, stats/bootstrap.hpp): resample b of context x comes from the stream
// (context_seed(seed, x), b) only, so any thread count gives the same numbers. On the CUDA device
// the same resamples are drawn and summed by the engine's device bootstrap (device_bootstrap,
// replay/device_replay.hpp, bit for bit the CPU's means), so the backend changes no number either.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ncclbot {

// The seed of context x's resamples.
uint64_t context_seed(uint64_t seed, size_t x);

enum class ResampleBackend { cpu, cuda };

// "cpu" or "cuda"; UsageError naming `option` otherwise, and for "cuda" in a build without the
// CUDA kernels or on a machine without a usable device.
ResampleBackend parse_resample_backend(const std::string& text, const std::string& option);

// For k columns of one value per block ([k][blocks], one column after another), each column's
// sum over the blocks drawn by resamples 0 .. resamples - 1: out[b * k + c]. `threads` is the
// CPU's (0: all cores).
std::vector<double> block_bootstrap_sums(std::span<const double> columns, size_t k, uint64_t seed, int resamples,
                                         unsigned threads, ResampleBackend backend = ResampleBackend::cpu);

}  // namespace ncclbot
