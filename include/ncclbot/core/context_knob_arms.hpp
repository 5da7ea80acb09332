#pragma once
// The knob arms of one context: every usable algorithm x protocol slot crossed with a knob spec's
// channel and chunk values (core/knob_spec.hpp), one rule for the plugin's knob mode (docs/plugin.md
// "Knob mode"), plugin-check and the readers of its decision logs (docs/ope.md "Knob logs").
// Header-only: the plugin links nothing of the host library.
#include <algorithm>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/knob_spec.hpp"

namespace ncclbot {

// The arms of a context whose cost table leaves the slots of `usable`: each slot crossed with the
// spec's channel and chunk values, in Arm order (as a knob sweep holds them). CollNet keeps NCCL's
// own channel count: NCCL's CollNet path loops over the tuner's nChannels with no cap (NCCL
// src/enqueue.cc, scheduleCollTasksToPlan's CollNet branch), and a tuner cannot see the
// communicator's channel count to stay below it.
inline std::vector<Arm> context_knob_arms(ArmMask usable, const KnobSpec& spec) {
  std::vector<Arm> arms;
  for (int s = 0; s < kNumNcclArms; ++s) {
    if (!usable.has(s)) continue;
    const bool collnet = slot_algo(s) == Algo::kCollNetDirect || slot_algo(s) == Algo::kCollNetChain;
    arms.push_back(Arm::of_slot(s));  // NCCL's own knobs are always an arm, listed or not
    for (const Arm& a : knob_arms(spec, s))
      if (!a.default_knobs() && !(collnet && a.channels != 0)) arms.push_back(a);
  }
  std::sort(arms.begin(), arms.end());
  arms.erase(std::unique(arms.begin(), arms.end()), arms.end());
  return arms;
}

// The index of arm `a` among a context's knob arms (context_knob_arms' sorted order); -1: none.
inline int knob_arm_index(const std::vector<Arm>& arms, const Arm& a) {
  const auto it = std::lower_bound(arms.begin(), arms.end(), a);
  return it != arms.end() && *it == a ? int(it - arms.begin()) : -1;
}

}  // namespace ncclbot
