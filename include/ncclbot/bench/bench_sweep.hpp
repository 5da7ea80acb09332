#pragma once
// The synthetic sweep `ncclbot bench` replays (and scripts/bench_peers.py reads back through
// `ncclbot bench --write-sweep`): `contexts` contexts with `arms` valid arms each, spread over the
// 21 slots, `samples` samples per arm and a prior, all drawn from a fixed-seed std::mt19937_64 so
// every run measures the same work. Above 21 arms the arms are knob arms (a knob sweep): arm a is
// slot a mod 21 at channels 1 + (a / 21) mod 64 and the protocol's chunk grain times 1 + a / 1344.
#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

// The most contexts a bench sweep holds (GPUs per node then stay at most 8 x 209 = 1672).
inline constexpr int kMaxBenchContexts = 100000;
// The most arms per context: what the replay engines hold in a knob sweep (kKnobReplayArms).
inline constexpr int kMaxBenchArms = 512;

Sweep make_bench_sweep(int arms, int contexts, int samples, uint64_t seed = 2026);

}  // namespace ncclbot
