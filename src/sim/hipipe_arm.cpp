// The simulated HiPIPE arm: HiPIPE's model (src/hipipe) on the simulator's own fabric numbers.
#include "ncclbot/sim/hipipe_arm.hpp"

#include <algorithm>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/predicted_time.hpp"
#include "ncclbot/model/tuning_constants.hpp"

namespace ncclbot::sim {

hipipe::FabricPreset hipipe_fabric(const FabricPreset& f, bool truth) {
  if (f.hipipe_preset.empty())
    throw UsageError("fabric " + f.name + " has no HiPIPE arm (its preset " + f.file +
                     " has no [hipipe] table naming a data/hipipe preset)");
  hipipe::FabricPreset h = hipipe::load_fabric_preset(f.hipipe_preset);
  // NVLink: per GPU, as NCCL rates it ([hardware]) or as a forced Ring sustains it on one NVLink
  // domain ([truth], the same plateau the simulator's Ring arm runs at there).
  const double nvlink = double(f.nvlink_bw) * (truth ? f.ring_bw_scale_one_node : 1.0);
  // Scale-out: each GPU drives its share of the host's NICs (as topology_for gives NCCL), at the
  // rated speed or at the measured per-NIC plateau.
  const double nic = double(f.nic_bw) * double(f.nics_per_host) / double(f.gpus_per_host) *
                     (truth ? f.hipipe_nic_bw_scale : 1.0);
  // Several scale-out dimensions (a leaf and an oversubscribed spine) keep the preset's ratios.
  double widest_scale_out = 0.0;
  for (const auto& d : h.dimensions)
    if (d.span == hipipe::Span::kNodes) widest_scale_out = std::max(widest_scale_out, d.bandwidth_GBps);
  for (auto& d : h.dimensions)
    d.bandwidth_GBps = d.span == hipipe::Span::kGpus ? nvlink : nic * d.bandwidth_GBps / widest_scale_out;
  return h;
}

HiPipeArm load_hipipe_arm(const FabricPreset& f) {
  HiPipeArm arm;
  arm.nominal = hipipe_fabric(f, false);
  arm.measured = hipipe_fabric(f, true);
  arm.base_latency_us = model::base_latency_us(int(Algo::kRing), int(Proto::kSimple));
  arm.launch_overhead_us = f.launch_overhead_us;
  return arm;
}

bool hipipe_arm_applies(const HiPipeArm& arm, const Context& ctx) {
  if (ctx.collective != Collective::kAllReduce || ctx.nodes < 2) return false;
  return hipipe::build_network(arm.nominal, ctx.nodes, ctx.gpus_per_node).num_dimensions() >= 2;
}

HiPipeArmTimes hipipe_arm_times(const HiPipeArm& arm, const Context& ctx,
                                const hipipe::SchedulerOptions& options) {
  HiPipeArmTimes t;
  t.prior_us = arm.base_latency_us + hipipe::hipipe_predicted_time_us(arm.nominal, ctx.collective, ctx.nodes,
                                                                      ctx.gpus_per_node, ctx.bytes, options);
  t.truth_us = arm.launch_overhead_us + arm.base_latency_us +
               hipipe::hipipe_predicted_time_us(arm.measured, ctx.collective, ctx.nodes, ctx.gpus_per_node,
                                                ctx.bytes, options);
  return t;
}

}  // namespace ncclbot::sim
