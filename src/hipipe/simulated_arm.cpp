// The simulated HiPIPE arm: HiPIPE's model on the simulator's own fabric numbers.
#include "ncclbot/hipipe/simulated_arm.hpp"

#include <algorithm>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/predicted_time.hpp"
#include "ncclbot/model/tuning_constants.hpp"

namespace ncclbot::hipipe {

FabricPreset arm_fabric_preset(const ArmFabric& f, bool truth) {
  if (f.hipipe_preset.empty())
    throw UsageError("fabric " + f.name + " has no HiPIPE arm (its preset " + f.file +
                     " has no [hipipe] table naming a data/hipipe preset)");
  FabricPreset h = load_fabric_preset(f.hipipe_preset);
  // NVLink: per GPU, as NCCL rates it ([hardware]) or as a forced Ring sustains it on one NVLink
  // domain ([truth], the same plateau the simulator's Ring arm runs at there).
  const double nvlink = f.nvlink_bw * (truth ? f.ring_bw_scale_one_node : 1.0);
  // Scale-out: each GPU drives its share of the host's NICs (as topology_for gives NCCL), at the
  // rated speed or at the measured per-NIC plateau.
  const double nic = f.nic_bw * f.nics_per_host / f.gpus_per_host * (truth ? f.nic_bw_scale : 1.0);
  // Several scale-out dimensions (a leaf and an oversubscribed spine) keep the preset's ratios.
  double widest_scale_out = 0.0;
  for (const auto& d : h.dimensions)
    if (d.span == Span::kNodes) widest_scale_out = std::max(widest_scale_out, d.bandwidth_GBps);
  for (auto& d : h.dimensions)
    d.bandwidth_GBps = d.span == Span::kGpus ? nvlink : nic * d.bandwidth_GBps / widest_scale_out;
  return h;
}

SimulatedArm load_simulated_arm(const ArmFabric& f) {
  SimulatedArm arm;
  arm.nominal = arm_fabric_preset(f, false);
  arm.measured = arm_fabric_preset(f, true);
  arm.base_latency_us = model::base_latency_us(int(Algo::kRing), int(Proto::kSimple));
  arm.launch_overhead_us = f.launch_overhead_us;
  return arm;
}

bool simulated_arm_applies(const SimulatedArm& arm, const Context& ctx) {
  if (ctx.collective != Collective::kAllReduce || ctx.nodes < 2) return false;
  return build_network(arm.nominal, ctx.nodes, ctx.gpus_per_node).num_dimensions() >= 2;
}

SimulatedArmTimes simulated_arm_times(const SimulatedArm& arm, const Context& ctx,
                                      const SchedulerOptions& options) {
  SimulatedArmTimes t;
  t.prior_us = arm.base_latency_us + hipipe_predicted_time_us(arm.nominal, ctx.collective, ctx.nodes,
                                                              ctx.gpus_per_node, ctx.bytes, options);
  t.truth_us = arm.launch_overhead_us + arm.base_latency_us +
               hipipe_predicted_time_us(arm.measured, ctx.collective, ctx.nodes, ctx.gpus_per_node, ctx.bytes,
                                        options);
  return t;
}

}  // namespace ncclbot::hipipe
