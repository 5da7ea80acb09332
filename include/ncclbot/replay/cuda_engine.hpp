#pragma once
// The CUDA replay engine behind `--backend cuda`: the same ReplayJob in, the same ReplayResults
// out, bit for bit, as run_cpu_replay() (cpu_engine.hpp), with the replays and their aggregation
// on the GPU (replay/device_replay.hpp). Only in builds with CUDA (NCCLBOT_HAVE_CUDA); the program
// installs it with set_cuda_replay_engine() (src/cli/cuda_backend.cpp).
#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot {

// Throws UsageError for the inputs run_cpu_replay() rejects, std::runtime_error when CUDA fails.
ReplayResults run_cuda_replay(const ReplayJob& job);

}  // namespace ncclbot
