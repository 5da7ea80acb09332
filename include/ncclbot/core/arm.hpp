#pragma once
// Algorithms, protocols and arm slots with NCCL's own indices (nccl_common.h, 2.28), so an arm
// slot is exactly an index into the tuner's [NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] table.
#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

enum class Algo : int8_t {
  kTree = 0,
  kRing = 1,
  kCollNetDirect = 2,
  kCollNetChain = 3,
  kNvls = 4,
  kNvlsTree = 5,
  kPat = 6,
};

enum class Proto : int8_t { kLL = 0, kLL128 = 1, kSimple = 2 };

inline constexpr int kNumAlgos = 7;
inline constexpr int kNumProtos = 3;
inline constexpr int kNumArms = kNumAlgos * kNumProtos;  // 21 slots

NCCLBOT_HD constexpr int arm_slot(Algo a, Proto p) { return int(a) * kNumProtos + int(p); }
NCCLBOT_HD constexpr Algo slot_algo(int slot) { return Algo(slot / kNumProtos); }
NCCLBOT_HD constexpr Proto slot_proto(int slot) { return Proto(slot % kNumProtos); }

// Set of valid arm slots of one context: bit s set <=> slot s was measured / is enabled.
struct ArmMask {
  uint32_t bits = 0;

  NCCLBOT_HD constexpr bool has(int slot) const { return (bits >> slot) & 1u; }
  NCCLBOT_HD constexpr void set(int slot) { bits |= (1u << slot); }
  NCCLBOT_HD constexpr int count() const {
    int n = 0;
    for (int s = 0; s < kNumArms; ++s) n += has(s) ? 1 : 0;
    return n;
  }
  NCCLBOT_HD constexpr bool empty() const { return bits == 0; }
  NCCLBOT_HD constexpr bool operator==(const ArmMask& o) const { return bits == o.bits; }
};

}  // namespace ncclbot
