#include "plugin_check/knob_context.hpp"

#include <cmath>
#include <set>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "plugin/knob_choice.hpp"

namespace ncclbot::plugin_check {
namespace {

std::string joined(const std::set<uint32_t>& values) {
  std::string s;
  for (uint32_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

}  // namespace

bool knob_context(const SweepView& v, int c, CostTable7x3* table, std::string* knobs, std::string* skipped) {
  std::vector<Arm> arms;
  ArmMask slots;
  std::set<uint32_t> channels, chunks[kNumProtos];
  for (auto& row : table->t)
    for (float& e : row) e = -1.0f;
  const ValidArms valid = v.valid_arms(c);
  for (int s = 0; s < v.arms; ++s) {
    if (!valid.has(s)) continue;
    const Arm a = v.arm(c, s);
    if (!is_nccl_slot(a.slot())) {
      *skipped = "the sweep has the simulated HiPIPE arm, which NCCL's cost table cannot hold";
      return false;
    }
    const float p = v.prior(c, s);
    float& entry = table->t[int(a.algo)][int(a.proto)];
    if (!(p >= 0.0f && std::isfinite(p)) || (slots.has(a.slot()) && entry != p)) {
      *skipped = "the arms of " + slot_label(a.slot()) +
                 " carry no prior_us or different ones, which one cost-table entry cannot hold";
      return false;
    }
    entry = p;
    slots.set(a.slot());
    arms.push_back(a);
    channels.insert(a.channels);
    chunks[int(a.proto)].insert(a.chunk_bytes);
  }
  channels.insert(0);
  for (auto& list : chunks) list.insert(0);
  *knobs = "channels=" + joined(channels) + ";chunk.LL=" + joined(chunks[0]) +
           ";chunk.LL128=" + joined(chunks[1]) + ";chunk.Simple=" + joined(chunks[2]);
  if (context_knob_arms(slots, parse_knob_spec(*knobs, "plugin-check")) != arms) {
    *skipped = "its arms are not every crossing of its channel and chunk values (" + *knobs +
               "), each measured, which is what the plugin's knob mode learns over";
    return false;
  }
  return true;
}

}  // namespace ncclbot::plugin_check
