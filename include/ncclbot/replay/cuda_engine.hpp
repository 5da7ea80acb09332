#pragma once
// The CUDA replay engine behind `--backend cuda`: the same ReplayJob in, the same ReplayResults
// out, bit for bit, as run_cpu_replay() (cpu_engine.hpp), with the replays and their aggregation
// on the GPU (replay/device_replay.hpp). run_cuda_replay() exists only in builds with CUDA
// (NCCLBOT_HAVE_CUDA); the program installs it with set_cuda_replay_engine()
// (src/cli/cuda_backend.cpp). The two translations around the device call are plain host code,
// built and tested everywhere.
#include <cstdint>
#include <vector>

#include "ncclbot/replay/communicators.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/device_replay.hpp"

namespace ncclbot {

// A ReplayJob as device_replay() takes it; `request` points into the vectors, so keep this alive
// (and unmoved) while the request is used.
struct DeviceReplayInputs {
  std::vector<uint64_t> stream_ids;  // per job context
  std::vector<PolicyConfig> configs;
  std::vector<int> fixed_slots;          // [config][sweep context], -1 = none; empty when no config has any
  std::vector<double> observation_cost;  // [config][job context], empty when nothing is charged
  std::vector<uint8_t> slots_only;       // [config], 1 for a `@slots` spec; empty when none is
  Communicators communicators;  // of the job's contexts, with a first-use cost (replay/first_use.hpp)
  DeviceReplayRequest request;

  DeviceReplayInputs() = default;
  DeviceReplayInputs(const DeviceReplayInputs&) = delete;
  DeviceReplayInputs& operator=(const DeviceReplayInputs&) = delete;
};

// Checks the job as run_cpu_replay() does (UsageError for no sweep, configs or contexts, seeds < 1,
// horizon < 1, a context out of range, frozen decisions not covering the sweep) and fills `out`.
void prepare_device_replay(const ReplayJob& job, DeviceReplayInputs& out);

// The device's outputs in the CPU engine's ReplayResults, and its --raw rows (config, context,
// seed order) on job.raw when set.
ReplayResults replay_results_from_device(const ReplayJob& job, DeviceReplayResult&& device);

// prepare_device_replay + device_replay + replay_results_from_device. Throws std::runtime_error
// when CUDA fails.
ReplayResults run_cuda_replay(const ReplayJob& job);

}  // namespace ncclbot
