#pragma once
// The smallest mean over hundreds of arms without reading every arm: the packed arms in blocks of
// kWidth, each block summarised by its smallest mean. A policy that changes one arm per update
// (UCB1, greedy) refreshes that arm's block (kWidth reads); min_of() and argmin_mean() then read
// the block minima and one block. min is exact, so the smallest block minimum is min_of(mean, k)
// and the first arm holding it is argmin_mean()'s (ArmBlocks.TheMinimaAreTheScans).
//
// Used by the knob-arm instantiations (N > kNumArms) on the host: the 24-slot policies keep their
// layout and scans, and no knob sweep replays on the GPU (docs/replay.md).
#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

template <int N, bool kKnobArms = (N > kNumArms)>
struct ArmBlocksT {
  static constexpr int kWidth = 16;
  static constexpr int kBlocks = (N + kWidth - 1) / kWidth;
#if defined(__CUDA_ARCH__)
  static constexpr bool kUsed = false;
#else
  static constexpr bool kUsed = true;
#endif
  double lowest_mean[kBlocks];
  int blocks;  // ceil(k / kWidth) (members set by build(), none initialised)

  NCCLBOT_HD void refresh_block(const ArmStatsT<N>& stats, int b) {
    const int first = b * kWidth, end = first + kWidth < stats.arms.k ? first + kWidth : stats.arms.k;
    double m = stats.mean[first];
    for (int j = first + 1; j < end; ++j) m = stats.mean[j] < m ? stats.mean[j] : m;
    lowest_mean[b] = m;
  }
  NCCLBOT_HD void build(const ArmStatsT<N>& stats) {
    blocks = (stats.arms.k + kWidth - 1) / kWidth;
    for (int b = 0; b < blocks; ++b) refresh_block(stats, b);
  }
  // Packed arm j's mean changed.
  NCCLBOT_HD void refresh(const ArmStatsT<N>& stats, int j) {
    refresh_block(stats, j / kWidth);
  }

  // min_of(stats.mean, k), k >= 1.
  NCCLBOT_HD double lowest() const {
    return min_of(lowest_mean, blocks);
  }

  // stats.argmin_mean() when every arm is observed (untried == 0, k >= 1): the first arm at the
  // smallest mean, found in the first block whose minimum it is.
  NCCLBOT_HD int argmin_mean(const ArmStatsT<N>& stats) const {
    const double m = lowest();
    int b = 0;
    while (b < blocks - 1 && lowest_mean[b] != m) ++b;
    const int first = b * kWidth, end = first + kWidth < stats.arms.k ? first + kWidth : stats.arms.k;
    for (int j = first; j < end; ++j)
      if (stats.mean[j] == m) return j;
    return stats.arms.k - 1;  // unreachable without NaN; the scan's answer then
  }
};

// The 24-slot policies keep none: [[no_unique_address]] members of this type take no room.
template <int N>
struct ArmBlocksT<N, false> {
  static constexpr bool kUsed = false;
};

}  // namespace ncclbot
