#pragma once
// One decision as the leader hands it to every rank (docs/plugin.md "Knob mode"): the algorithm x
// protocol slot to play and, over knob arms, the channel count and chunk size that go with it.
#include <cstdint>

#include "ncclbot/core/arm.hpp"

namespace ncclbot::plugin {

struct DecidedArm {
  int8_t slot = -1;          // -1: NCCL's own choice (channels and chunk then 0)
  uint16_t channels = 0;     // 0: NCCL's own
  uint32_t chunk_bytes = 0;  // 0: NCCL's own

  static constexpr DecidedArm of_slot(int slot) { return DecidedArm{int8_t(slot < 0 ? -1 : slot), 0, 0}; }
  static constexpr DecidedArm of(const Arm& a) {
    return DecidedArm{int8_t(a.slot()), a.channels, a.chunk_bytes};
  }
  constexpr bool nccl_own() const { return slot < 0; }
  // The arm it names (nccl_own(): none).
  constexpr Arm arm() const { return Arm{slot_algo(slot), slot_proto(slot), channels, chunk_bytes}; }
  constexpr bool operator==(const DecidedArm&) const = default;
};

// Why `d` is no decision a rank may play, or nullptr: a slot outside NCCL's 21, knobs beside NCCL's
// own choice, or knobs NCCL cannot be given (arm_fault).
constexpr const char* decided_arm_fault(const DecidedArm& d) {
  if (d.slot < 0) return d.slot == -1 && d.channels == 0 && d.chunk_bytes == 0 ? nullptr : "no such slot";
  if (d.slot >= kNumNcclArms) return "no such slot";
  return arm_fault(d.arm());
}

}  // namespace ncclbot::plugin
