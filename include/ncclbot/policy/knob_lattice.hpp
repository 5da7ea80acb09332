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
// The graph is computed once, at reset(), from the context's arms, as links along each knob and a ring
// of the arms that share their knobs, so for_each_neighbour() visits an arm's neighbours in
// O(degree), not O(arms); adjacent() answers one pair.
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
  // Per knob: the next smaller value's arm, NCCL's own value's arm (both for an arm off NCCL's own
  // value), and for the arm at NCCL's own value the smallest other value's; -1 where there is none.
  Index down_channels[N], zero_channels[N], first_channels[N];
  Index down_chunk[N], zero_chunk[N], first_chunk[N];
  Index same_knobs[N];  // the next arm (cyclic, by index) with the same channels and chunk: itself if none
  int max_degree;       // the most neighbours any arm has (OSUB's gamma)

  // Arms of `set` (packed, as the policy's stats hold them); `arms` names each index, null for a
  // slot-shaped context (index s is slot s at NCCL's own knobs).
  NCCLBOT_HD void assign(const ArmSetT<N>& set, const Arm* arms) {
    const int k = set.k < N ? set.k : N;  // never above N (an ArmSet holds at most N)
    for (int j = 0; j < k; ++j) {
      const int s = set.slot[j];
      const Arm a = arms ? arms[s] : Arm::of_slot(s);
      group[j] = int8_t(a.slot());
      channels[j] = a.channels;
      chunk[j] = a.chunk_bytes;
    }
    for (int j = 0; j < k; ++j) {
      int up_ch = -1, up_ck = -1, down_ch = -1, down_ck = -1, zero_ch = -1, zero_ck = -1;
      int first_ch = -1, first_ck = -1, same = -1;
      for (int i = 0; i < k; ++i) {
        if (i != j && channels[i] == channels[j] && chunk[i] == chunk[j]) {
          if (i < j && same < 0) same = i;                // the lowest before j, unless one comes after
          if (i > j && (same < 0 || same < j)) same = i;  // the first after j
        }
        if (group[i] != group[j]) continue;
        if (chunk[i] == chunk[j] && channels[i] != channels[j]) {
          if (channels[i] == 0) zero_ch = i;
          if (channels[i] != 0 && (first_ch < 0 || channels[i] < channels[first_ch])) first_ch = i;
          if (channels[j] != 0 && channels[i] > channels[j] && (up_ch < 0 || channels[i] < channels[up_ch]))
            up_ch = i;
          if (channels[i] != 0 && channels[i] < channels[j] &&
              (down_ch < 0 || channels[i] > channels[down_ch]))
            down_ch = i;
        }
        if (channels[i] == channels[j] && chunk[i] != chunk[j]) {
          if (chunk[i] == 0) zero_ck = i;
          if (chunk[i] != 0 && (first_ck < 0 || chunk[i] < chunk[first_ck])) first_ck = i;
          if (chunk[j] != 0 && chunk[i] > chunk[j] && (up_ck < 0 || chunk[i] < chunk[up_ck])) up_ck = i;
          if (chunk[i] != 0 && chunk[i] < chunk[j] && (down_ck < 0 || chunk[i] > chunk[down_ck])) down_ck = i;
        }
      }
      up_channels[j] = Index(up_ch);
      up_chunk[j] = Index(up_ck);
      down_channels[j] = Index(channels[j] != 0 ? down_ch : -1);
      down_chunk[j] = Index(chunk[j] != 0 ? down_ck : -1);
      zero_channels[j] = Index(channels[j] != 0 ? zero_ch : -1);
      zero_chunk[j] = Index(chunk[j] != 0 ? zero_ck : -1);
      first_channels[j] = Index(channels[j] == 0 ? first_ch : -1);
      first_chunk[j] = Index(chunk[j] == 0 ? first_ck : -1);
      same_knobs[j] = Index(same < 0 ? j : same);
    }
    max_degree = 0;
    for (int j = 0; j < k; ++j) {
      int degree = 0;
      for_each_neighbour(j, [&](int) { ++degree; });
      max_degree = degree > max_degree ? degree : max_degree;
    }
  }

  // f(i) for every neighbour i of packed arm j (above), each once, in no particular order.
  template <typename F>
  NCCLBOT_HD void for_each_neighbour(int j, F&& f) const {
    if (channels[j] == 0) {  // NCCL's own count: next to every other count at the same chunk
      for (int i = first_channels[j]; i >= 0; i = up_channels[i]) f(i);
    } else {
      if (zero_channels[j] >= 0) f(int(zero_channels[j]));
      if (down_channels[j] >= 0) f(int(down_channels[j]));
      if (up_channels[j] >= 0) f(int(up_channels[j]));
    }
    if (chunk[j] == 0) {
      for (int i = first_chunk[j]; i >= 0; i = up_chunk[i]) f(i);
    } else {
      if (zero_chunk[j] >= 0) f(int(zero_chunk[j]));
      if (down_chunk[j] >= 0) f(int(down_chunk[j]));
      if (up_chunk[j] >= 0) f(int(up_chunk[j]));
    }
    for (int i = same_knobs[j]; i != j; i = same_knobs[i]) f(i);
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
