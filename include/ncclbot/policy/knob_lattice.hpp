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
// O(degree), not O(arms).
#include <algorithm>
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
      up_channels[j] = up_chunk[j] = down_channels[j] = zero_channels[j] = first_channels[j] = Index(-1);
      down_chunk[j] = zero_chunk[j] = first_chunk[j] = Index(-1);
    }
    // Sorted runs instead of comparing every pair (O(arms log arms), not O(arms^2)): the runs of one
    // group and chunk size by channel count give the channel links, those of one group and channel
    // count by chunk size the chunk links, those of one channel count and chunk size by index the
    // rings of arms that share their knobs.
    Index order[N];
    link_runs(order, k, group, chunk, channels, up_channels, down_channels, zero_channels, first_channels);
    link_runs(order, k, group, channels, chunk, up_chunk, down_chunk, zero_chunk, first_chunk);
    for (int j = 0; j < k; ++j) order[j] = Index(j);
    sort_indices(order, k,
                 [&](int a, int b) { return key_less(channels[a], chunk[a], a, channels[b], chunk[b], b); });
    for (int s = 0; s < k;) {
      int e = s;
      while (e + 1 < k && channels[order[e + 1]] == channels[order[s]] &&
             chunk[order[e + 1]] == chunk[order[s]])
        ++e;
      for (int p = s; p <= e; ++p) same_knobs[order[p]] = p < e ? order[p + 1] : order[s];
      s = e + 1;
    }
    max_degree = 0;
    for (int j = 0; j < k; ++j) {
      int degree = 0;
      for_each_neighbour(j, [&](int) { ++degree; });
      max_degree = degree > max_degree ? degree : max_degree;
    }
  }

  // (a1, a2, a3) < (b1, b2, b3), lexicographically.
  template <typename A, typename B, typename C>
  NCCLBOT_HD static bool key_less(A a1, B a2, C a3, A b1, B b2, C b3) {
    if (a1 != b1) return a1 < b1;
    if (a2 != b2) return a2 < b2;
    return a3 < b3;
  }

  // idx[0..n) sorted by less (a strict total order, so one answer whatever the algorithm), in place:
  // std::sort on the host, a heap sort on the device.
  template <typename Less>
  NCCLBOT_HD static void sort_indices(Index* idx, int n, Less less) {
#if !defined(__CUDA_ARCH__)
    std::sort(idx, idx + n, [&](Index a, Index b) { return less(int(a), int(b)); });
#else
    heap_sort_indices(idx, n, less);
#endif
  }
  // The device's sort_indices (tested on the host against std::sort).
  template <typename Less>
  NCCLBOT_HD static void heap_sort_indices(Index* idx, int n, Less less) {
    const auto sift = [&](int root, int end) {
      while (2 * root + 1 < end) {
        int child = 2 * root + 1;
        if (child + 1 < end && less(idx[child], idx[child + 1])) ++child;
        if (!less(idx[root], idx[child])) return;
        const Index t = idx[root];
        idx[root] = idx[child];
        idx[child] = t;
        root = child;
      }
    };
    for (int start = n / 2 - 1; start >= 0; --start) sift(start, n);
    for (int end = n - 1; end > 0; --end) {
      const Index t = idx[0];
      idx[0] = idx[end];
      idx[end] = t;
      sift(0, end);
    }
  }

  // The links along one knob (values `knob`): the arms sorted by (group, other knob, knob) fall into
  // runs of one group and one value of the other knob, each ascending in the knob with NCCL's own
  // value (0) first; an arm off 0 links up and down its run and to the run's 0, the arm at 0 to the
  // run's smallest other value.
  template <typename K, typename Other>
  NCCLBOT_HD static void link_runs(Index* order, int k, const int8_t* group, const Other* other,
                                   const K* knob, Index* up, Index* down, Index* zero, Index* first) {
    for (int j = 0; j < k; ++j) order[j] = Index(j);
    sort_indices(order, k, [&](int a, int b) {
      return key_less(group[a], other[a], knob[a], group[b], other[b], knob[b]);
    });
    const auto same_run = [&](int a, int b) { return group[a] == group[b] && other[a] == other[b]; };
    for (int s = 0; s < k;) {
      int e = s;
      while (e + 1 < k && same_run(order[s], order[e + 1])) ++e;
      const int at_zero = knob[order[s]] == 0 ? int(order[s]) : -1;
      for (int p = s; p <= e; ++p) {
        const int j = order[p];
        if (knob[j] == 0) {
          first[j] = Index(p < e ? int(order[p + 1]) : -1);
          continue;
        }
        up[j] = Index(p < e ? int(order[p + 1]) : -1);
        down[j] = Index(p > s && knob[order[p - 1]] != 0 ? int(order[p - 1]) : -1);
        zero[j] = Index(at_zero);
      }
      s = e + 1;
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
};

}  // namespace ncclbot
