#pragma once
// The simulated HiPIPE arm (slot kHiPipeSlot = HiPIPE/Simple; docs/hipipe.md "HiPIPE as a simulated
// arm"). On a fabric whose preset names a data/hipipe preset, `synth --hipipe` adds it to every
// all-reduce context of at least two hosts whose job spans at least two network dimensions (one
// dimension is the plain ring, which NCCL's Ring/Simple already is).
//
// Both of its numbers run HiPIPE's model (src/hipipe: LP chunk sizes, searched chunk count) on the
// simulator's own fabric: the data/hipipe preset gives the dimensions and per-step latencies, the
// simulator preset the bandwidths.
//   prior  = base + makespan(nominal bandwidths: [hardware] nvlink_bw, nic_bw per GPU)
//   truth  = launch_overhead_us + base + makespan(measured plateaus: nvlink_bw x
//            ring_bw_scale_one_node, nic_bw per GPU x [hipipe] nic_bw_scale)
// where base is NCCL's Ring/Simple base latency (8.4 us, one kernel launch: what NCCL's arms pay
// before their per-hop latencies). HiPIPE gets no hidden deviations; its samples carry the same
// multiplicative noise as every other arm. The prior is what warm-started bandits read; AUTO never
// picks the arm (policy/auto_policy.hpp).
#include "ncclbot/core/context.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/schedulers.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::sim {

// The HiPIPE preset of `f` with the simulator's bandwidths: nominal ([hardware]) when `truth` is
// false, measured plateaus when true. UsageError when `f` has no [hipipe] table.
hipipe::FabricPreset hipipe_fabric(const FabricPreset& f, bool truth);

// What the arm needs of one fabric, loaded once per sweep.
struct HiPipeArm {
  hipipe::FabricPreset nominal, measured;  // hipipe_fabric(f, false), hipipe_fabric(f, true)
  double base_latency_us = 0.0;            // NCCL's Ring/Simple base latency
  double launch_overhead_us = 0.0;         // the fabric's [truth] launch overhead
};
HiPipeArm load_hipipe_arm(const FabricPreset& f);

// Whether the arm exists in `ctx` (see above).
bool hipipe_arm_applies(const HiPipeArm& arm, const Context& ctx);

struct HiPipeArmTimes {
  double prior_us = 0.0;
  double truth_us = 0.0;
};

// Prior and noise-free truth of the arm in `ctx` (which must satisfy hipipe_arm_applies). Each
// solves HiPIPE's chunk-count search (up to ~150 LPs): call once per context, never per sample.
HiPipeArmTimes hipipe_arm_times(const HiPipeArm& arm, const Context& ctx,
                                const hipipe::SchedulerOptions& options = {});

}  // namespace ncclbot::sim
