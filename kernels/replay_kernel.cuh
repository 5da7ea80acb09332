#pragma once
// The replay kernel and its launch, shared by the two translation units that instantiate it: one
// thread per (config, seed, context) replay of the shared replay core (replay/replay.hpp) on the
// sweep in device memory through SweepView, drawing from cuRAND's Philox (core/philox.hpp), in a
// grid-stride loop sized from the device (replay/launch_shape.hpp). No policy or replay logic lives
// here: the kernel only maps a thread to its replay.
//   - replay_slots.cu: every registered policy at kNumArms, on a sweep of one arm per algorithm
//     and protocol slot; a thread's state in the block's shared memory (docs/cuda.md
//     "Per-thread state");
//   - replay_knobs.cu: the same policies at kKnobReplayArms, on a knob sweep; a thread's state
//     (tens of kilobytes at 512 arms) in its local memory, which the hardware interleaves across
//     a warp's lanes.
// Two units, so a two-core build compiles them side by side.
// A __host__ __device__ function reaching host-only code (e.g. a shared header that lost its
// NCCLBOT_HD) is only a warning by default and fails at run time; make it a compile error here.
#pragma nv_diag_error 20011
#pragma nv_diag_error 20013
#pragma nv_diag_error 20014
#pragma nv_diag_error 20015
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_try.hpp"
#include "device_memory.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/launch_shape.hpp"
#include "ncclbot/replay/replay.hpp"
#include "ncclbot/replay/shared_state_layout.hpp"

namespace ncclbot::replay_kernels {

struct ReplayKernelArgs {
  SweepView sweep;
  const int* contexts;             // [N]
  const uint64_t* stream_ids;      // [N]
  const void* policies;            // [configs of this launch], Policy objects with their params set
  const int* fixed_slots;          // [configs of this launch][sweep.num_contexts] or null
  const double* call_cost_us;      // [configs of this launch] or null (no per-call cost)
  const double* observation_cost;  // [configs of this launch][N] or null (watching costs nothing)
  const uint8_t* slots_only;       // [configs of this launch] or null (every config sees every arm)
  int contexts_count, seeds, horizon, delay, window, policy_start;
  uint64_t seed_base;
  int64_t replays;  // configs * seeds * N
  double* online;   // [replays], (config, seed, context) row-major
  double* final_loss;
  int* final_slot;
  uint32_t* first_use;  // [replays][kNumAlgos], or null (no first-use charges)
};

// Where a thread's state lives (replay/shared_state_layout.hpp, docs/cuda.md): with room for
// kNumArms arms the policy object always in the block's dynamic shared memory, the undelayed
// cursor too, and the delayed cursor (its ring of up to 1,024 calls in flight, 5 KB) in the
// thread's local memory; with a knob capacity both in local memory (a block of 32 threads of
// 512-arm UCB1 would need 1.5 MB of shared memory).
template <typename Policy, typename Cursor>
struct ReplayState {
  static constexpr bool kShared = kPolicyArms<Policy> == kNumArms;
  static constexpr bool kCursorShared = kShared && Cursor::kRing == 1;
  static constexpr size_t kStride =
      kShared ? shared_slot_stride(sizeof(Policy), kCursorShared ? sizeof(Cursor) : 0) : 0;
  static constexpr size_t kCursorOffset = cursor_offset(sizeof(Policy));
  static_assert(alignof(Policy) <= 8 && alignof(Cursor) <= 8 && kCursorOffset % 8 == 0,
                "slots and the cursor in them are 8-byte aligned");
};

extern __shared__ __align__(16) unsigned char replay_shared[];

// One kernel per policy type and cursor, launched for a run of configs of that type: each
// instantiation holds only its own policy's state (no union of every policy), and a warp never
// diverges on the dispatch. Consecutive threads take consecutive contexts of one (config, seed)
// and so read neighbouring sweep rows. Cursor is ReplayCursorT<0, N> for delay 0 (no ring of calls
// in flight) and ReplayCursorT<kMaxReplayDelay, N> otherwise, the choice replay_one() makes per
// replay. The results are the same bits wherever the state lives (ReplayState).
template <typename Policy, typename Cursor>
__global__ void replay_kernel(ReplayKernelArgs a) {
  using State = ReplayState<Policy, Cursor>;
  const int64_t per_config = int64_t(a.seeds) * a.contexts_count;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const Policy* policies = static_cast<const Policy*>(a.policies);
  unsigned char* slot = replay_shared + size_t(threadIdx.x) * State::kStride;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < a.replays; r += stride) {
    const int config = int(r / per_config);
    const int64_t rest = r % per_config;
    const int seed = int(rest / a.contexts_count), i = int(rest % a.contexts_count);
    ReplayTask task;
    task.sweep = a.sweep;
    task.context = a.contexts[i];
    task.seed = a.seed_base + uint64_t(seed);
    task.stream_id = a.stream_ids[i];
    task.horizon = a.horizon;
    task.delay = a.delay;
    task.window = a.window;
    task.policy_start = a.policy_start;
    task.call_cost_us = a.call_cost_us ? a.call_cost_us[config] : 0.0;
    task.observation_cost =
        a.observation_cost ? a.observation_cost[int64_t(config) * a.contexts_count + i] : 0.0;
    task.slots_only = a.slots_only && a.slots_only[config] != 0;
    task.fixed_slot =
        a.fixed_slots ? a.fixed_slots[int64_t(config) * a.sweep.num_contexts + task.context] : -1;
    NoStepObserver observe;
    ReplayOutcome o;
    // The policy's params are set; reset() in the cursor's begin() initialises its state.
    if constexpr (State::kCursorShared) {
      Policy& policy = *reinterpret_cast<Policy*>(slot);
      Cursor& cursor = *reinterpret_cast<Cursor*>(slot + State::kCursorOffset);
      policy = policies[config];
      o = replay_in_cursor(cursor, policy, task, observe);
    } else if constexpr (State::kShared) {
      Policy& policy = *reinterpret_cast<Policy*>(slot);
      policy = policies[config];
      o = replay_with_cursor<Cursor>(policy, task, observe);
    } else {
      Policy policy = policies[config];
      o = replay_with_cursor<Cursor>(policy, task, observe);
    }
    a.online[r] = o.online_loss;
    a.final_loss[r] = o.final_loss;
    a.final_slot[r] = o.final_slot;
    if (a.first_use)
      for (int k = 0; k < kNumAlgos; ++k) a.first_use[r * kNumAlgos + k] = o.first_use[k];
  }
}

// The block's threads and shared memory for the kernel, set up for launch: the requested block,
// first cut to the threads the kernel's registers allow per block (cudaFuncGetAttributes: 1,024
// threads of the delayed RandomPolicy, 72 registers each, would need more than the SM's 65,536),
// then, for state in shared memory, to the most whole warps whose state fits the device's shared
// memory per block; the occupancy calculator then says how many such blocks an SM holds. The block
// never changes a result (each replay writes only its own outputs), only the speed.
template <typename Policy, typename Cursor>
DeviceShape replay_kernel_device_shape(const char* policy_name, int requested_block, int* block,
                                       size_t* shared_bytes) {
  using State = ReplayState<Policy, Cursor>;
  constexpr bool delayed = Cursor::kRing > 1;
  const std::string kernel = std::string("the ") + policy_name + (delayed ? " (delayed" : " (undelayed") +
                             ", " + std::to_string(kPolicyArms<Policy>) + " arms) replay kernel";
  int device = 0, max_block_bytes = 0;
  NCCLBOT_CUDA_TRY(cudaGetDevice(&device));
  DeviceShape d;
  NCCLBOT_CUDA_TRY(cudaDeviceGetAttribute(&d.multiprocessors, cudaDevAttrMultiProcessorCount, device));
  NCCLBOT_CUDA_TRY(cudaDeviceGetAttribute(&max_block_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes limits{};
  NCCLBOT_CUDA_TRY(cudaFuncGetAttributes(&limits, replay_kernel<Policy, Cursor>));
  const int launchable = block_within_kernel_limit(requested_block, limits.maxThreadsPerBlock);
  *block = State::kShared ? threads_for_shared_state(launchable, State::kStride, size_t(max_block_bytes))
                          : launchable;
  if (*block < 1)
    throw std::runtime_error(
        "device_replay: " + kernel + " cannot run a block: " + std::to_string(limits.maxThreadsPerBlock) +
        " threads per block allowed, " + std::to_string(State::kStride) +
        " bytes of shared memory per thread, " + std::to_string(max_block_bytes) + " per block");
  *shared_bytes = size_t(*block) * State::kStride;
  if constexpr (State::kShared)
    NCCLBOT_CUDA_TRY(cudaFuncSetAttribute(replay_kernel<Policy, Cursor>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, int(*shared_bytes)));
  NCCLBOT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &d.resident_blocks_per_sm, replay_kernel<Policy, Cursor>, *block, *shared_bytes));
  // Zero resident blocks means a launch of this shape fails; say which kernel and why, not the
  // launch's bare cudaErrorInvalidConfiguration.
  if (d.resident_blocks_per_sm < 1)
    throw std::runtime_error("device_replay: " + kernel + " fits no block of " + std::to_string(*block) +
                             " threads on an SM (" + std::to_string(limits.numRegs) +
                             " registers per thread, " + std::to_string(*shared_bytes) +
                             " bytes of shared memory per block): occupancy 0");
  return d;
}

// The policy object of one config, params filled in by visit_policy (policy/policy.hpp), so the
// mapping from PolicyConfig to parameters exists once.
template <typename Wanted>
struct PolicyObjectOf {
  Wanted* out;
  bool* found;
  template <typename Policy>
  NCCLBOT_HD int operator()(Policy& p) const {
    if constexpr (std::is_same_v<Policy, Wanted>) {
      *out = p;
      *found = true;
    }
    return 0;
  }
};

// Where a launch of a knob kernel failed, the frame it needed: local memory is reserved for every
// thread the device can hold at once (per-thread frame x threads per SM x SMs), which a 512-arm
// policy's tens of kilobytes make gigabytes.
template <typename Policy, typename Cursor>
void check_launch(const char* policy_name) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return;
  std::string why = std::string("device_replay: the ") + policy_name + " replay kernel (" +
                    std::to_string(kPolicyArms<Policy>) + " arms) did not launch: " + cudaGetErrorName(e) +
                    ": " + cudaGetErrorString(e);
  if constexpr (!ReplayState<Policy, Cursor>::kShared) {
    cudaFuncAttributes limits{};
    if (cudaFuncGetAttributes(&limits, replay_kernel<Policy, Cursor>) == cudaSuccess)
      why += " (each thread's state is " + std::to_string(limits.localSizeBytes) +
             " bytes of local memory, reserved for every thread the device holds at once)";
  }
  throw std::runtime_error(why);
}

// Enqueues replay_kernel<Policy, the request's cursor> on configs [first, first + count) of the
// request (all of one kind) on `stream`; the policy objects are uploaded and freed on that stream.
template <typename Policy>
void enqueue_replays(const char* policy_name, ReplayKernelArgs a, const PolicyConfig* configs, int first,
                     int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape) {
  static_assert(std::is_trivially_copyable_v<Policy>, "policies are copied to the device as bytes");
  constexpr int kArms = kPolicyArms<Policy>;
  using Undelayed = ReplayCursorT<0, kArms>;
  using Delayed = ReplayCursorT<kMaxReplayDelay, kArms>;
  std::vector<Policy> objects(size_t(count), Policy{});
  for (int k = 0; k < count; ++k) {
    bool found = false;
    visit_policy<kArms>(configs[first + k], PolicyObjectOf<Policy>{&objects[size_t(k)], &found});
    if (!found) throw std::logic_error("device_replay: policy kind and kernel type disagree");
  }
  DeviceBuffer<Policy> policies(objects.data(), objects.size(), stream);
  a.policies = policies.get();
  const bool delayed = a.delay > 0 || a.window > 1 || a.policy_start > 0;
  int threads = 0;
  size_t shared_bytes = 0;
  const DeviceShape device =
      delayed ? replay_kernel_device_shape<Policy, Delayed>(policy_name, block, &threads, &shared_bytes)
              : replay_kernel_device_shape<Policy, Undelayed>(policy_name, block, &threads, &shared_bytes);
  *shape = grid_stride_shape(a.replays, threads, device);
  if (max_grid > 0 && shape->grid > max_grid) shape->grid = max_grid;
  if (delayed) {
    replay_kernel<Policy, Delayed><<<shape->grid, shape->block, shared_bytes, stream>>>(a);
    check_launch<Policy, Delayed>(policy_name);
  } else {
    replay_kernel<Policy, Undelayed><<<shape->grid, shape->block, shared_bytes, stream>>>(a);
    check_launch<Policy, Undelayed>(policy_name);
  }
}

// The kernel of a policy kind at arm capacity N, generated from the registry (policy/policy.hpp);
// enqueue_replays() checks every config against visit_policy. Each of replay_slots.cu (kNumArms)
// and replay_knobs.cu (kKnobReplayArms) instantiates it once, behind the functions below.
template <int N>
void enqueue_replays_at(PolicyKind kind, const ReplayKernelArgs& a, const PolicyConfig* configs, int first,
                        int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape) {
  switch (kind) {
#define NCCLBOT_POLICY_LAUNCH(Kind, number, Type, identifier, name, ...) \
  case PolicyKind::Kind:                                                 \
    return enqueue_replays<Type<N>>(name, a, configs, first, count, block, max_grid, stream, shape);
    NCCLBOT_POLICIES(NCCLBOT_POLICY_LAUNCH)
#undef NCCLBOT_POLICY_LAUNCH
    default:
      return enqueue_replays<AutoPolicyT<N>>("auto", a, configs, first, count, block, max_grid, stream,
                                             shape);
  }
}

// enqueue_replays_at<kNumArms> (replay_slots.cu) and enqueue_replays_at<kKnobReplayArms>
// (replay_knobs.cu).
void enqueue_slot_replays(PolicyKind kind, const ReplayKernelArgs& a, const PolicyConfig* configs, int first,
                          int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape);
void enqueue_knob_replays(PolicyKind kind, const ReplayKernelArgs& a, const PolicyConfig* configs, int first,
                          int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape);

}  // namespace ncclbot::replay_kernels
