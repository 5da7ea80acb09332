// What the CUDA replay engine uploads of a sweep view and what it refuses: plain host code, so the
// device call's checks and sizes are tested where no GPU is.
#include <stdexcept>
#include <string>

#include "ncclbot/replay/device_replay.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

DeviceSweepExtents device_sweep_extents(const SweepView& v) {
  const size_t contexts = size_t(v.num_contexts), cells = contexts * size_t(v.arms);
  DeviceSweepExtents n;
  n.time_us = cells * size_t(v.samples);
  n.mean_us = cells;
  n.prior_us = v.has_prior() ? cells : 0;
  n.valid = contexts * size_t(v.valid_words());
  n.arm_table = v.arm_table ? cells : 0;
  n.first_use_us = v.first_use_us ? contexts : 0;
  n.fresh = v.fresh ? contexts : 0;
  return n;
}

void check_device_replay_request(const DeviceReplayRequest& q) {
  const auto refuse = [](const std::string& why) { throw std::invalid_argument("device_replay: " + why); };
  if (q.configs.empty() || q.contexts.empty()) refuse("no configs or contexts");
  if (q.stream_ids.size() != q.contexts.size()) refuse("one stream id per context is needed");
  if (q.seeds < 1 || q.horizon < 1) refuse("seeds and horizon must be >= 1");
  if (!feedback_schedule_fits(q.delay, q.window) || q.policy_start < 0)
    refuse("delay or decision window out of range");
  if (!q.call_cost_us.empty() && q.call_cost_us.size() != q.configs.size())
    refuse("call_cost_us must have one cost per config");
  if (!q.observation_cost.empty() && q.observation_cost.size() != q.configs.size() * q.contexts.size())
    refuse("observation_cost must be [configs][contexts]");
  if (!q.slots_only.empty() && q.slots_only.size() != q.configs.size())
    refuse("slots_only must have one flag per config");
  if (!q.fixed_slots.empty() && q.fixed_slots.size() != q.configs.size() * size_t(q.sweep.num_contexts))
    refuse("fixed_slots must be [configs][sweep contexts]");
  if (!q.connected.empty() &&
      (q.member_begin.size() != q.connected.size() + 1 || q.members.size() != q.contexts.size() ||
       q.member_begin.back() != int(q.members.size())))
    refuse("communicators must cover every context once");
  if (q.sweep.slot_shaped() && q.sweep.arms != kNumArms)
    refuse("a sweep without an arm table holds one arm per algorithm and protocol slot (" +
           std::to_string(kNumArms) + "), not " + std::to_string(q.sweep.arms));
  if (!q.sweep.slot_shaped() && (q.sweep.arms < 1 || q.sweep.arms > kKnobReplayArms))
    refuse("the kernels hold at most " + std::to_string(kKnobReplayArms) + " arms per context, not " +
           std::to_string(q.sweep.arms));
  for (int c : q.contexts)
    if (c < 0 || c >= q.sweep.num_contexts) refuse("context out of range");
}

}  // namespace ncclbot
