// The CUDA replay engine's host side: uploads the sweep once, launches the replay kernels of
// replay_kernel.cuh (one per run of configs of one policy kind, side by side on streams), then
// aggregates on the device (replay/replay_aggregate.hpp), so only means and summaries cross PCIe.
// The kernels themselves are instantiated in replay_slots.cu and replay_knobs.cu.
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sequence.h>
#include <thrust/system/cuda/execution_policy.h>

#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "device_memory.hpp"
#include "ncclbot/replay/device_replay.hpp"
#include "ncclbot/replay/first_use.hpp"
#include "ncclbot/replay/replay_aggregate.hpp"
#include "replay_kernel.cuh"

namespace ncclbot {
namespace {

using replay_kernels::ReplayKernelArgs;

// The kernels of a policy kind at the sweep's arm capacity (replay_kernel.cuh).
void enqueue_replays_of_kind(const SweepView& sweep, PolicyKind kind, const ReplayKernelArgs& a,
                             const PolicyConfig* configs, int first, int count, int block, int max_grid,
                             cudaStream_t stream, LaunchShape* shape) {
  if (sweep.slot_shaped())
    replay_kernels::enqueue_slot_replays(kind, a, configs, first, count, block, max_grid, stream, shape);
  else
    replay_kernels::enqueue_knob_replays(kind, a, configs, first, count, block, max_grid, stream, shape);
}

// Streams a call's launches are spread over when all its outputs fit at once (one per policy kind
// run, up to this many; further runs share them in turn).
constexpr size_t kMaxConcurrentLaunches = 8;

// Seconds between two events recorded on streams whose work is done.
double seconds_between(const DeviceEvent& begin, const DeviceEvent& end) {
  float ms = 0.0f;
  NCCLBOT_CUDA_TRY(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  return double(ms) / 1e3;
}

// Runs of consecutive configs of one policy kind, at most `chunk` configs each: one launch each.
std::vector<std::pair<int, int>> launch_runs(std::span<const PolicyConfig> configs, int chunk) {
  std::vector<std::pair<int, int>> runs;
  const int n = int(configs.size());
  for (int first = 0; first < n;) {
    int count = 1;
    while (first + count < n && count < chunk &&
           configs[size_t(first + count)].kind == configs[size_t(first)].kind)
      ++count;
    runs.emplace_back(first, count);
    first += count;
  }
  return runs;
}

// Row starts of a [rows][width] array for CUB's segmented sorts: offsets[r] = r * width.
struct RowOffsets {
  int rows, width;
  DeviceBuffer<int> offsets;
  template <typename Exec>
  RowOffsets(int rows_, int width_, const Exec& exec, cudaStream_t st)
      : rows(rows_), width(width_), offsets(size_t(rows_) + 1, st) {
    if (int64_t(rows) * width > int64_t(INT32_MAX))
      throw std::invalid_argument("device_replay: more than 2^31 - 1 losses to sort at once");
    thrust::sequence(exec, offsets.get(), offsets.get() + rows + 1, 0, width);
  }
  int items() const { return rows * width; }
};

// The temporary storage to allocate for a CUB call whose size query asked for `bytes`: at least one
// byte, because CUB takes a null storage pointer as another size query, so a 0-byte (null) buffer
// would make the second call return without sorting.
size_t cub_temp_bytes(size_t bytes) {
  return std::max<size_t>(bytes, 1);
}

// Each row of `in` ascending into `out`: one CUB segmented sort. A radix sort orders keys by their
// bits, so equal keys are identical and the output is the stable sorts' of summarize_per_config()
// (losses are never -0.0, the one value whose bits differ from an equal one's: a loss is a sum
// of non-negative terms).
void sort_rows(const RowOffsets& rows, const double* in, double* out, cudaStream_t st) {
  size_t bytes = 0;
  NCCLBOT_CUDA_TRY(cub::DeviceSegmentedSort::SortKeys(nullptr, bytes, in, out, rows.items(), rows.rows,
                                                      rows.offsets.get(), rows.offsets.get() + 1, st));
  DeviceBuffer<unsigned char> temp(cub_temp_bytes(bytes), st);
  NCCLBOT_CUDA_TRY(cub::DeviceSegmentedSort::SortKeys(temp.get(), bytes, in, out, rows.items(), rows.rows,
                                                      rows.offsets.get(), rows.offsets.get() + 1, st));
}

// sort_rows_with_units() of replay/replay_aggregate.hpp as one CUB call: (loss, context) pairs of
// each row, stably by loss, so equal losses keep context order.
void sort_rows_with_units(const RowOffsets& rows, const double* in, const int* unit_in, double* out,
                          int* unit_at, cudaStream_t st) {
  size_t bytes = 0;
  NCCLBOT_CUDA_TRY(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, in, out, unit_in, unit_at,
                                                             rows.items(), rows.rows, rows.offsets.get(),
                                                             rows.offsets.get() + 1, st));
  DeviceBuffer<unsigned char> temp(cub_temp_bytes(bytes), st);
  NCCLBOT_CUDA_TRY(cub::DeviceSegmentedSort::StableSortPairs(temp.get(), bytes, in, out, unit_in, unit_at,
                                                             rows.items(), rows.rows, rows.offsets.get(),
                                                             rows.offsets.get() + 1, st));
}

}  // namespace

DeviceReplayResult device_replay(const DeviceReplayRequest& q) {
  check_device_replay_request(q);
  const auto started = std::chrono::steady_clock::now();
  const SweepView& h = q.sweep;
  const int n_cfg = int(q.configs.size()), n_ctx = int(q.contexts.size());
  const DeviceSweepExtents n = device_sweep_extents(h);
  const DeviceStream stream;  // every copy, launch and sort of this call, in order
  const cudaStream_t st = stream.get();
  StreamAllocator scratch{st};
  const auto exec = thrust::cuda::par_nosync(scratch).on(st);

  // The sweep, once, in device memory; the kernel sees it through a SweepView of device pointers.
  DeviceBuffer<float> time_us(h.time_us, n.time_us, st);
  DeviceBuffer<double> mean_us(h.mean_us, n.mean_us, st);
  DeviceBuffer<float> prior_us(h.prior_us, n.prior_us, st);
  DeviceBuffer<uint32_t> valid(h.valid, n.valid, st);
  DeviceBuffer<Arm> arm_table(h.arm_table, n.arm_table, st);
  DeviceBuffer<float> first_use_us(h.first_use_us, n.first_use_us, st);
  DeviceBuffer<ObservationNoise> fresh(h.fresh, n.fresh, st);
  SweepView dev_sweep = h;  // the call dynamics and the arms per context travel by value
  dev_sweep.first_use_us = h.first_use_us ? first_use_us.get() : nullptr;
  dev_sweep.fresh = h.fresh ? fresh.get() : nullptr;
  dev_sweep.time_us = time_us.get();
  dev_sweep.mean_us = mean_us.get();
  dev_sweep.prior_us = h.has_prior() ? prior_us.get() : nullptr;
  dev_sweep.valid = valid.get();
  dev_sweep.arm_table = h.arm_table ? arm_table.get() : nullptr;

  DeviceBuffer<int> contexts(q.contexts.data(), q.contexts.size(), st);
  DeviceBuffer<uint64_t> stream_ids(q.stream_ids.data(), q.stream_ids.size(), st);
  DeviceBuffer<int> fixed_slots(q.fixed_slots.data(), q.fixed_slots.size(), st);
  DeviceBuffer<double> call_cost_us(q.call_cost_us.data(), q.call_cost_us.size(), st);
  DeviceBuffer<double> observation_cost(q.observation_cost.data(), q.observation_cost.size(), st);
  DeviceBuffer<uint8_t> slots_only(q.slots_only.data(), q.slots_only.size(), st);

  const int64_t per_config = int64_t(q.seeds) * n_ctx;
  // First-use charges (replay/first_use.hpp) need every replay's first-use calls.
  const bool charged = !q.connected.empty();
  const int64_t bytes_per_replay =
      2 * sizeof(double) + sizeof(int) + (charged ? kNumAlgos * sizeof(uint32_t) : 0);
  // The per-replay outputs of at most `chunk` configs are on the device at once.
  const int chunk = configs_per_launch(n_cfg, per_config, bytes_per_replay, q.scratch_budget_bytes);
  DeviceBuffer<double> online(size_t(chunk) * per_config, st), final_loss(size_t(chunk) * per_config, st);
  DeviceBuffer<int> final_slot(size_t(chunk) * per_config, st);
  DeviceBuffer<uint32_t> first_use(charged ? size_t(chunk) * per_config * kNumAlgos : 0, st);
  DeviceBuffer<int> members(q.members.data(), q.members.size(), st);
  DeviceBuffer<int> member_begin(q.member_begin.data(), q.member_begin.size(), st);
  DeviceBuffer<int> connected(q.connected.data(), q.connected.size(), st);
  DeviceBuffer<double> online_mean(size_t(n_cfg) * n_ctx, st), final_mean(size_t(n_cfg) * n_ctx, st);

  DeviceReplayResult res;
  if (q.keep_per_replay) {
    res.online.resize(size_t(n_cfg) * per_config);
    res.final_loss.resize(size_t(n_cfg) * per_config);
    res.final_slot.resize(size_t(n_cfg) * per_config);
  }
  const auto args_for = [&](int first, int count, int64_t out_offset) {
    ReplayKernelArgs a{};
    a.sweep = dev_sweep;
    a.contexts = contexts.get();
    a.stream_ids = stream_ids.get();
    a.fixed_slots = q.fixed_slots.empty() ? nullptr : fixed_slots.get() + int64_t(first) * h.num_contexts;
    a.call_cost_us = q.call_cost_us.empty() ? nullptr : call_cost_us.get() + first;
    a.observation_cost =
        q.observation_cost.empty() ? nullptr : observation_cost.get() + int64_t(first) * n_ctx;
    a.slots_only = q.slots_only.empty() ? nullptr : slots_only.get() + first;
    a.contexts_count = n_ctx;
    a.seeds = q.seeds;
    a.horizon = q.horizon;
    a.delay = q.delay;
    a.window = q.window;
    a.policy_start = q.policy_start;
    a.seed_base = q.seed_base;
    a.replays = int64_t(count) * per_config;
    a.online = online.get() + out_offset;
    a.final_loss = final_loss.get() + out_offset;
    a.final_slot = final_slot.get() + out_offset;
    a.first_use = charged ? first_use.get() + out_offset * kNumAlgos : nullptr;
    return a;
  };
  // Configs [first, first + count), whose outcomes start the output buffers: their seed means, and
  // their outcomes copied back when kept; returns once the call's stream is done.
  const auto reduce_and_copy_back = [&](int first, int count) {
    if (charged) {
      const int communicators = int(q.connected.size());
      thrust::for_each_n(exec, thrust::counting_iterator<int64_t>(0),
                         int64_t(count) * q.seeds * communicators,
                         ChargeFirstUses{dev_sweep, contexts.get(), stream_ids.get(), members.get(),
                                         member_begin.get(), connected.get(), first_use.get(), online.get(),
                                         communicators, q.seeds, n_ctx, q.horizon, q.seed_base});
    }
    mean_over_seeds(exec, online.get(), count, q.seeds, n_ctx, online_mean.get() + int64_t(first) * n_ctx);
    mean_over_seeds(exec, final_loss.get(), count, q.seeds, n_ctx, final_mean.get() + int64_t(first) * n_ctx);
    const size_t at = size_t(first) * size_t(per_config), replays = size_t(count) * size_t(per_config);
    if (q.keep_per_replay) {
      online.copy_to_host(res.online.data() + at, replays);
      final_loss.copy_to_host(res.final_loss.data() + at, replays);
      final_slot.copy_to_host(res.final_slot.data() + at, replays);
    }
    stream.synchronize();
  };
  const std::vector<std::pair<int, int>> runs = launch_runs(q.configs, chunk);
  res.launches = int(runs.size());
  if (chunk == n_cfg) {
    // Every output fits at once: each run (one policy kind) gets its own stream, so the kinds'
    // kernels share the device instead of each small one leaving it half idle; the call's stream
    // waits for all of them before it aggregates.
    const DeviceEvent uploaded(st);
    std::vector<std::unique_ptr<DeviceStream>> lanes;
    for (size_t r = 0; r < runs.size() && r < kMaxConcurrentLaunches; ++r) {
      lanes.push_back(std::make_unique<DeviceStream>());
      NCCLBOT_CUDA_TRY(cudaStreamWaitEvent(lanes.back()->get(), uploaded.get()));
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto [first, count] = runs[r];
      enqueue_replays_of_kind(h, q.configs[size_t(first)].kind,
                              args_for(first, count, int64_t(first) * per_config), q.configs.data(), first,
                              count, q.block, q.max_grid, lanes[r % lanes.size()]->get(), &res.shape);
    }
    std::vector<std::unique_ptr<DeviceEvent>> done;
    for (const auto& lane : lanes) {
      done.push_back(std::make_unique<DeviceEvent>(lane->get()));
      NCCLBOT_CUDA_TRY(cudaStreamWaitEvent(st, done.back()->get()));
    }
    const DeviceEvent end(st);
    reduce_and_copy_back(0, n_cfg);
    res.kernel_seconds = seconds_between(uploaded, end);
  } else {
    // Outputs of at most `chunk` configs at a time: one launch after the other in the one buffer.
    for (const auto& [first, count] : runs) {
      const DeviceEvent begin(st);
      enqueue_replays_of_kind(h, q.configs[size_t(first)].kind, args_for(first, count, 0), q.configs.data(),
                              first, count, q.block, q.max_grid, st, &res.shape);
      const DeviceEvent end(st);
      reduce_and_copy_back(first, count);
      res.kernel_seconds += seconds_between(begin, end);
    }
  }

  // Summaries per config over the contexts, on the device: each row sorted by one CUB call.
  {
    const size_t n = size_t(n_cfg) * n_ctx;
    DeviceBuffer<double> sorted(n, st);
    DeviceBuffer<LossSummary> summary(size_t(n_cfg), st);
    const RowOffsets rows(n_cfg, n_ctx, exec, st);
    res.online_summary.resize(size_t(n_cfg));
    res.final_summary.resize(size_t(n_cfg));
    sort_rows(rows, online_mean.get(), sorted.get(), st);
    summarize_sorted_rows(exec, online_mean.get(), sorted.get(), n_cfg, n_ctx, summary.get());
    summary.copy_to_host(res.online_summary.data(), size_t(n_cfg));
    sort_rows(rows, final_mean.get(), sorted.get(), st);
    summarize_sorted_rows(exec, final_mean.get(), sorted.get(), n_cfg, n_ctx, summary.get());
    summary.copy_to_host(res.final_summary.data(), size_t(n_cfg));
  }
  res.online_mean.resize(size_t(n_cfg) * n_ctx);
  res.final_mean.resize(size_t(n_cfg) * n_ctx);
  online_mean.copy_to_host(res.online_mean.data(), res.online_mean.size());
  final_mean.copy_to_host(res.final_mean.data(), res.final_mean.size());
  stream.synchronize();
  res.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

std::vector<double> device_bootstrap(std::span<const double> loss, int configs, BootstrapStatistic statistic,
                                     uint64_t resamples, uint64_t seed, double threshold,
                                     int64_t scratch_budget_bytes) {
  if (configs < 1 || loss.empty() || loss.size() % size_t(configs) != 0 || resamples == 0)
    throw std::invalid_argument("device_bootstrap: empty input or rows of unequal length");
  const int n = int(loss.size() / size_t(configs));
  const DeviceStream stream;
  const cudaStream_t st = stream.get();
  StreamAllocator scratch{st};
  const auto exec = thrust::cuda::par_nosync(scratch).on(st);
  DeviceBuffer<double> d_loss(loss.data(), loss.size(), st);
  const bool p99 = statistic == BootstrapStatistic::p99;
  DeviceBuffer<double> sorted(p99 ? loss.size() : 0, st);
  DeviceBuffer<int> unit_at(p99 ? loss.size() : 0, st);
  if (p99) {
    DeviceBuffer<int> units(loss.size(), st);
    thrust::transform(exec, thrust::counting_iterator<int64_t>(0),
                      thrust::counting_iterator<int64_t>(int64_t(loss.size())), units.get(), IndexInRow{n});
    sort_rows_with_units(RowOffsets(configs, n, exec, st), d_loss.get(), units.get(), sorted.get(),
                         unit_at.get(), st);
  }
  // p99 counts draws per context: configs * chunk * n counters at a time, within the budget.
  const uint64_t per_resample = p99 ? uint64_t(configs) * uint64_t(n) * sizeof(uint32_t) : 1;
  const uint64_t chunk =
      std::min<uint64_t>(resamples, std::max<uint64_t>(1, uint64_t(scratch_budget_bytes) / per_resample));
  DeviceBuffer<uint32_t> draws(p99 ? size_t(configs) * chunk * size_t(n) : 0, st);
  DeviceBuffer<double> theta(size_t(configs) * chunk, st);
  std::vector<double> out(size_t(configs) * resamples);
  std::vector<double> part(size_t(configs) * chunk);
  for (uint64_t first = 0; first < resamples; first += chunk) {
    const uint64_t count = std::min(chunk, resamples - first);
    bootstrap_over_contexts(exec, d_loss.get(), configs, n, statistic, threshold, seed, first, count,
                            sorted.get(), unit_at.get(), draws.get(), theta.get());
    theta.copy_to_host(part.data(), size_t(configs) * count);
    for (int c = 0; c < configs; ++c)
      std::copy(part.begin() + long(size_t(c) * count), part.begin() + long(size_t(c + 1) * count),
                out.begin() + long(size_t(c) * resamples + first));
  }
  return out;
}

}  // namespace ncclbot
