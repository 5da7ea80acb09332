#pragma once
// The CUDA replay engine's narrow host interface (kernels/replay.cu), in plain host types so that
// g++-compiled code calls it without CUDA headers. It runs every (config, seed, context) replay of
// replay/replay.hpp as one GPU thread each, on a slot sweep (kNumArms arms) or a knob sweep (at most
// kKnobReplayArms arms per context, SweepView::arm_table set), aggregates on the device
// (replay/replay_aggregate.hpp) and copies back only the per (config, context) seed means and per-config
// summaries, plus the per-replay outcomes when asked for. Every number is bit-identical to run_cpu_replay().
// Failures of the CUDA runtime throw std::runtime_error naming the call, file and line.
#include <cstdint>
#include <span>
#include <vector>

#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/launch_shape.hpp"
#include "ncclbot/stats/bootstrap_statistic.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {

struct DeviceReplayRequest {
  SweepView sweep;                        // host arrays; uploaded once per call
  std::span<const int> contexts;          // sweep context indices (N)
  std::span<const uint64_t> stream_ids;   // Philox subsequence of each of them (N)
  std::span<const PolicyConfig> configs;  // C
  std::span<const int> fixed_slots;       // [C][sweep.num_contexts], -1 = none; empty = none at all
  int seeds = 1;
  uint64_t seed_base = 0;
  int horizon = 1;
  int delay = 0;                         // feedback delay D (replay/replay.hpp)
  int window = 1;                        // decision window W (replay/replay.hpp)
  int policy_start = 0;                  // calls of NCCL's own pick first (replay/replay.hpp)
  std::span<const double> call_cost_us;  // [C] per-call cost of each config (>= 0); empty = none
  // [C][N]: what watching adds to a call of config c on context i (ReplayTask::observation_cost);
  // empty = none. The kernels watch every call (no watch rule).
  std::span<const double> observation_cost;
  // [C]: 1 where config c sees only the arms at NCCL's own channels and chunk size
  // (ReplayTask::slots_only, a `@slots` spec); empty = none does.
  std::span<const uint8_t> slots_only;
  // The communicators whose first-use charges the online losses get (replay/first_use.hpp,
  // Communicators of replay/communicators.hpp); empty = none (a sweep without a first-use cost).
  std::span<const int> members, member_begin, connected;
  bool keep_per_replay = false;  // copy back every replay's outcome
  int block = 128;               // threads per block of the replay kernel
  int max_grid = 0;              // > 0: at most this many blocks, so each thread strides over many replays
  int64_t scratch_budget_bytes = int64_t(1) << 30;  // per-replay outputs held at once on the device
};

struct DeviceReplayResult {
  std::vector<double> online_mean, final_mean;             // [C][N], mean over seeds
  std::vector<LossSummary> online_summary, final_summary;  // [C], over the N contexts
  // [C][seeds][N], only with keep_per_replay.
  std::vector<double> online, final_loss;
  std::vector<int> final_slot;
  LaunchShape shape;  // of the (last) replay launch
  int launches = 0;   // replay kernel launches (configs are split to fit the budget)
  // Replay kernels only, by CUDA events; kernels that overlap count from the first start to the
  // last end.
  double kernel_seconds = 0.0;
  double total_seconds = 0.0;  // upload, replays, aggregation and copies back
};

// The elements of each array of a view that device_replay() uploads (core/sweep_view.hpp's layout;
// 0 for an array the view does not have).
struct DeviceSweepExtents {
  size_t time_us = 0, mean_us = 0, prior_us = 0, valid = 0, arm_table = 0, first_use_us = 0, fresh = 0;
};
DeviceSweepExtents device_sweep_extents(const SweepView& view);

// What device_replay() refuses, as std::invalid_argument naming it: empty configs or contexts,
// arrays of the wrong length, seeds < 1, horizon < 1, a feedback schedule the delayed cursor cannot
// hold, a context out of range, a slot view without kNumArms arms, a knob view with no arm or more
// than kKnobReplayArms. Host code, tested without a GPU.
void check_device_replay_request(const DeviceReplayRequest& request);

// Throws std::invalid_argument for what check_device_replay_request() refuses.
DeviceReplayResult device_replay(const DeviceReplayRequest& request);

// Bootstrap resamples of contexts generated and evaluated on the device: for each config (a row of
// `loss`, [configs][n], e.g. DeviceReplayResult::online_mean) the statistic over the n contexts drawn
// by resamples 0 .. resamples-1, as theta [config][resample]: bit for bit the `distribution` that
// bootstrap_interval() keeps for the same statistic, threshold, seed and resample count. Intervals
// are then quantiles of these (stats/bootstrap.hpp). Throws std::invalid_argument for empty input.
std::vector<double> device_bootstrap(std::span<const double> loss, int configs, BootstrapStatistic statistic,
                                     uint64_t resamples, uint64_t seed, double threshold = 0.10,
                                     int64_t scratch_budget_bytes = int64_t(1) << 30);

}  // namespace ncclbot
