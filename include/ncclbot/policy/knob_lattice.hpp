#pragma once
// The graph over a context's arms that OSUB (osub.hpp) explores: which arm is a neighbour of which.
// Two arms are neighbours when they differ in one step of one knob, or in nothing but the algorithm
// and protocol:
//   - the same algorithm and protocol and channels, and chunk sizes next to each other among the
//     values that algorithm, protocol and channel count hold in this context (no value between);
//   - the same with channels and chunk size swapped;
//   - NCCL's own value (0) on one knob is next to every value of that knob: it is a channel count or
//     chunk size the policy does not know (NCCL decides it per call, docs/simulator.md "Knob
//     model"), so no value is known to lie between;
//   - the same channels and chunk size in another algorithm or protocol.
// So the leader moves one knob step at a time inside an algorithm and protocol, where AutoCCL (Xu et
// al., NSDI 2025, section 4.2) observes that the bandwidth is unimodal in each resource knob, and may
// change algorithm and protocol at its current knobs. A context without knob arms (every arm at NCCL's
// own knobs, or a slot-shaped context) is one complete graph: every arm is every other's neighbour.
// The graph is computed once, at reset(), from the context's arms; select() only asks adjacent().
#include <cstdint>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"
#include "ncclbot/policy/arm_set.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct KnobLatticeT {
  using Index = ArmIndexT<N>;
  int8_t group[N];       // packed arm -> its algorithm x protocol slot
  uint16_t channels[N];  // packed arm -> its channels (0: NCCL's own)
  uint32_t chunk[N];     // packed arm -> its chunk size (0: NCCL's own)
  Index up_channels[N];  // the next larger channel count at the same group and chunk, or -1
  Index up_chunk[N];     // the next larger chunk size at the same group and channels, or -1
  int max_degree;        // the most neighbours any arm has (OSUB's gamma)

  // Arms of `set` (packed, as the policy's stats hold them); `arms` names each index, null for a
  // slot-shaped context (index s is slot s at NCCL's own knobs).
  NCCLBOT_HD void assign(const ArmSetT<N>& set, const Arm* arms) {
    const int k = set.k;
    for (int j = 0; j < k; ++j) {
      const int s = set.slot[j];
      const Arm a = arms ? arms[s] : Arm::of_slot(s);
      group[j] = int8_t(a.slot());
      channels[j] = a.channels;
      chunk[j] = a.chunk_bytes;
    }
    for (int j = 0; j < k; ++j) {
      int up_ch = -1, up_ck = -1;
      for (int i = 0; i < k; ++i) {
        if (group[i] != group[j]) continue;
        if (chunk[i] == chunk[j] && channels[i] > channels[j] && channels[j] != 0 &&
            (up_ch < 0 || channels[i] < channels[up_ch]))
          up_ch = i;
        if (channels[i] == channels[j] && chunk[i] > chunk[j] && chunk[j] != 0 &&
            (up_ck < 0 || chunk[i] < chunk[up_ck]))
          up_ck = i;
      }
      up_channels[j] = Index(up_ch);
      up_chunk[j] = Index(up_ck);
    }
    max_degree = 0;
    for (int j = 0; j < k; ++j) {
      int degree = 0;
      for (int i = 0; i < k; ++i) degree += adjacent(j, i) ? 1 : 0;
      max_degree = degree > max_degree ? degree : max_degree;
    }
  }

  // Whether packed arms i and j are neighbours (above); an arm is not its own neighbour.
  NCCLBOT_HD bool adjacent(int i, int j) const {
    if (i == j) return false;
    if (group[i] != group[j]) return channels[i] == channels[j] && chunk[i] == chunk[j];
    if (channels[i] == channels[j] && chunk[i] != chunk[j])
      return chunk[i] == 0 || chunk[j] == 0 || up_chunk[i] == j || up_chunk[j] == i;
    if (chunk[i] == chunk[j] && channels[i] != channels[j])
      return channels[i] == 0 || channels[j] == 0 || up_channels[i] == j || up_channels[j] == i;
    return false;
  }
};

}  // namespace ncclbot
