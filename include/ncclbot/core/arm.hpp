#pragma once
// Algorithms, protocols and arm slots with NCCL's own indices (nccl_common.h, 2.28), so an arm
// slot below kNumNcclArms is exactly an index into the tuner's [NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]
// table. One more algorithm exists only in simulation: HiPIPE (algo 7, Simple only, slot 23), the
// pipelined hierarchical all-reduce of src/hipipe, which `synth --hipipe` adds as an arm so a study
// can ask what it would add over NCCL's arms. NCCL has no such algorithm: whatever faces NCCL (the
// tuner plugin, exported tables, nccl-tests ingest, NCCL's cost model and AUTO) uses the kNumNccl*
// constants and never sees slots >= kNumNcclArms.
#include <compare>
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/knob_limits.hpp"

namespace ncclbot {

enum class Algo : int8_t {
  kTree = 0,
  kRing = 1,
  kCollNetDirect = 2,
  kCollNetChain = 3,
  kNvls = 4,
  kNvlsTree = 5,
  kPat = 6,
  kHiPipe = 7,  // simulation only (see above); valid with Proto::kSimple alone
};

enum class Proto : int8_t { kLL = 0, kLL128 = 1, kSimple = 2 };

inline constexpr int kNumNcclAlgos = 7;  // NCCL_NUM_ALGORITHMS
inline constexpr int kNumAlgos = 8;      // NCCL's seven and HiPIPE
inline constexpr int kNumProtos = 3;
inline constexpr int kNumNcclArms = kNumNcclAlgos * kNumProtos;  // 21: NCCL's cost table
inline constexpr int kNumArms = kNumAlgos * kNumProtos;          // 24 slots; 21 and 22 never valid

NCCLBOT_HD constexpr int arm_slot(Algo a, Proto p) {
  return int(a) * kNumProtos + int(p);
}
NCCLBOT_HD constexpr Algo slot_algo(int slot) {
  return Algo(slot / kNumProtos);
}
NCCLBOT_HD constexpr Proto slot_proto(int slot) {
  return Proto(slot % kNumProtos);
}

inline constexpr int kHiPipeSlot = arm_slot(Algo::kHiPipe, Proto::kSimple);  // 23
// NCCL can run this slot (it indexes NCCL's cost table).
NCCLBOT_HD constexpr bool is_nccl_slot(int slot) {
  return slot >= 0 && slot < kNumNcclArms;
}
// An arm that exists at all: one of NCCL's 21 or HiPIPE/Simple (HiPIPE/LL and HiPIPE/LL128 do not).
NCCLBOT_HD constexpr bool is_arm_slot(int slot) {
  return is_nccl_slot(slot) || slot == kHiPipeSlot;
}

// One arm: a knob setting NCCL can be told to use for one collective. channels 0 and chunk_bytes 0
// mean NCCL's own value (NCCL reads a tuner's 0 channels as its own: NCCL src/enqueue.cc:2178; a
// chunk is only set through tuner v6 getChunkSize). Eight bytes, trivially copyable, usable in
// kernels. Arms order by (algorithm, protocol, channels, chunk), so a context's arms keep slot order
// and NCCL's own knob setting comes first within each algorithm and protocol.
struct Arm {
  Algo algo = Algo::kTree;
  Proto proto = Proto::kLL;
  uint16_t channels = 0;     // 0: NCCL's; else 1..kMaxChannels
  uint32_t chunk_bytes = 0;  // 0: NCCL's; else a multiple of the protocol's grain, >= the grain

  NCCLBOT_HD constexpr int slot() const { return arm_slot(algo, proto); }
  // NCCL's own channels and chunk size: the arm an algorithm x protocol sweep holds.
  NCCLBOT_HD constexpr bool default_knobs() const { return channels == 0 && chunk_bytes == 0; }
  NCCLBOT_HD static constexpr Arm of_slot(int slot) { return Arm{slot_algo(slot), slot_proto(slot), 0, 0}; }
  constexpr bool operator==(const Arm&) const = default;
  constexpr auto operator<=>(const Arm&) const = default;
};
static_assert(sizeof(Arm) == 8, "an arm is eight bytes");

// Why `a` is no arm NCCL can be given, or nullptr: an algorithm x protocol that does not exist,
// channels above NCCL's 64, a chunk off its protocol's grain (knob_limits.hpp).
constexpr const char* arm_fault(const Arm& a) {
  if (!is_arm_slot(a.slot())) return "no such algorithm and protocol";
  if (a.channels > kMaxChannels) return "channels above 64";
  if (a.chunk_bytes != 0 && !chunk_fits_grain(a.chunk_bytes, int(a.proto)))
    return "chunk_bytes is not a positive multiple of its protocol's grain (LL 16, LL128 1920, Simple 512 B)";
  if (a.chunk_bytes > kMaxChunkBytes) return "chunk_bytes above 2^30";
  return nullptr;
}

// Set of valid arm slots of one context: bit s set <=> slot s was measured / is enabled.
struct ArmMask {
  uint32_t bits = 0;

  NCCLBOT_HD constexpr bool has(int slot) const { return (bits >> slot) & 1u; }
  NCCLBOT_HD constexpr void set(int slot) { bits |= (1u << slot); }
  NCCLBOT_HD constexpr void clear(int slot) { bits &= ~(1u << slot); }
  NCCLBOT_HD constexpr bool any() const { return bits != 0; }
  NCCLBOT_HD constexpr int count() const {
    int n = 0;
    for (int s = 0; s < kNumArms; ++s) n += has(s) ? 1 : 0;
    return n;
  }
  NCCLBOT_HD constexpr bool empty() const { return bits == 0; }
  NCCLBOT_HD constexpr bool operator==(const ArmMask& o) const { return bits == o.bits; }
  // The same set without the simulation-only arms: what NCCL could run.
  NCCLBOT_HD constexpr ArmMask nccl_arms() const { return ArmMask{bits & ((1u << kNumNcclArms) - 1u)}; }
};

}  // namespace ncclbot
