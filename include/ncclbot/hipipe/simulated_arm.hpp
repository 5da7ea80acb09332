#pragma once
// The simulated HiPIPE arm (slot kHiPipeSlot = HiPIPE/Simple; docs/hipipe.md "HiPIPE as a simulated
// arm"). On a fabric whose preset names a data/hipipe preset, `synth --hipipe` adds it to every
// all-reduce context of at least two hosts whose job spans at least two network dimensions (one
// dimension is the plain ring, which NCCL's Ring/Simple already is).
//
// Both of its numbers run HiPIPE's model (LP chunk sizes, searched chunk count) on the simulator's
// own fabric: the data/hipipe preset gives the dimensions and per-step latencies, the simulator
// preset the bandwidths (sim/ fills ArmFabric from it: sim::hipipe_arm_fabric).
//   prior  = base + makespan(nominal bandwidths: [hardware] nvlink_bw, nic_bw per GPU)
//   truth  = launch_overhead_us + base + makespan(measured plateaus: nvlink_bw x
//            ring_bw_scale_one_node, nic_bw per GPU x [hipipe] nic_bw_scale)
// where base is NCCL's Ring/Simple base latency (8.4 us, one kernel launch: what NCCL's arms pay
// before their per-hop latencies). HiPIPE gets no hidden deviations; its samples carry the same
// multiplicative noise as every other arm. The prior is what warm-started bandits read; AUTO never
// picks the arm (policy/auto_policy.hpp).
#include <string>

#include "ncclbot/core/context.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

// What the arm needs of a simulator fabric preset (sim/fabric.hpp), by the same names.
struct ArmFabric {
  std::string name, file;                // the simulator preset, for messages
  std::string hipipe_preset;             // [hipipe] preset: a data/hipipe name; empty: the fabric has no arm
  double nvlink_bw = 0.0, nic_bw = 0.0;  // [hardware], per GPU and per NIC
  double nics_per_host = 0.0, gpus_per_host = 0.0;
  double ring_bw_scale_one_node = 1.0;  // [truth]: Ring's plateau on one NVLink domain
  double nic_bw_scale = 1.0;            // [hipipe]: the measured per-NIC plateau relative to nic_bw
  double launch_overhead_us = 0.0;      // [truth]
};

// The HiPIPE preset of `f` with the simulator's bandwidths: nominal ([hardware]) when `truth` is
// false, measured plateaus when true. UsageError when `f` has no HiPIPE preset.
FabricPreset arm_fabric_preset(const ArmFabric& f, bool truth);

// What the arm needs of one fabric, loaded once per sweep.
struct SimulatedArm {
  FabricPreset nominal, measured;   // arm_fabric_preset(f, false), arm_fabric_preset(f, true)
  double base_latency_us = 0.0;     // NCCL's Ring/Simple base latency
  double launch_overhead_us = 0.0;  // the fabric's [truth] launch overhead
};
SimulatedArm load_simulated_arm(const ArmFabric& f);

// Whether the arm exists in `ctx` (see above).
bool simulated_arm_applies(const SimulatedArm& arm, const Context& ctx);

struct SimulatedArmTimes {
  double prior_us = 0.0;
  double truth_us = 0.0;
};

// Prior and noise-free truth of the arm in `ctx` (which must satisfy simulated_arm_applies). Each
// solves HiPIPE's chunk-count search (up to ~150 LPs): call once per context, never per sample.
SimulatedArmTimes simulated_arm_times(const SimulatedArm& arm, const Context& ctx,
                                      const SchedulerOptions& options = {});

}  // namespace ncclbot::hipipe
