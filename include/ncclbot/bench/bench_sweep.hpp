#pragma once
// The synthetic sweep `ncclbot bench` replays (and scripts/bench_peers.py reads back through
// `ncclbot bench --write-sweep`): `contexts` contexts with `arms` valid arms each, spread over the
// 21 slots, `samples` samples per arm and a prior, all drawn from a fixed-seed std::mt19937_64 so
// every run measures the same work.
#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

// The most contexts a bench sweep holds (GPUs per node then stay at most 8 x 209 = 1672).
inline constexpr int kMaxBenchContexts = 100000;

Sweep make_bench_sweep(int arms, int contexts, int samples, uint64_t seed = 2026);

}  // namespace ncclbot
