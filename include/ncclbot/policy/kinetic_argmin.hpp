#pragma once
// lower_confidence_argmin() over hundreds of arms, for a policy that moves one arm per update
// (UCB1): a kinetic tournament. Arm j's index at scale s is the line x_j(s) = mean_j - s * inv_j;
// an update moves one line, and s moves every call (the bonus grows with t, m* moves). Node n of a
// tournament over the packed arms holds the better of its children's winners at the last s it was
// played at, and a window [lo_n, hi_n] of scales over which every comparison in its subtree is
// certain to come out the same. A call plays again only the nodes whose window misses s (and the
// path of the arm the last update moved), not the 2 * arms reads of a scan.
//
// Exactness. A node compares its children's winners with the scan's own expression at s, and the
// better is the smaller index, the lower arm on a tie: the scan's "first arm at the minimum", as
// that order is associative. The window is where the comparison is certain in floating point:
// with u = 2^-53, fl(m - fl(s * i)) is within u |m| + 2.01 u s i of m - s * i, so for the winner
// w and the other arm o the comparison keeps its answer (strictly) wherever
//   (m_o - m_w) - s (i_o - i_w) > K u (|m_o| + |m_w| + s (i_o + i_w)),
// a linear condition on s. K = 64 also covers the rounding of the condition's own terms (each
// within 2.01 u of its value), and the threshold is moved inwards by 10^-9 of itself, far above
// the division's rounding. Two arms on one line (knob arms sharing a prior, none pulled) give equal
// indices at every s, so the lower keeps the node everywhere. Where the comparison is not certain
// at s, the window is s alone, so the node is played again at the next call.
// KineticArgmin.EveryArgminEqualsTheScan checks arm for arm against the scan, near-ties and exact ties
// included.
//
// Used by the knob-arm instantiations (N > kNumArms) on the host, like arm_blocks.hpp.
#include <cmath>
#include <cstdint>

#include "ncclbot/core/pow2.hpp"
#include "ncclbot/policy/confidence_bound.hpp"

namespace ncclbot {

template <int N, bool kKnobArms = (N > kNumArms)>
struct KineticArgminT {
#if defined(__CUDA_ARCH__)
  static constexpr bool kUsed = false;
#else
  static constexpr bool kUsed = true;
#endif
  static constexpr int kNodes = 2 * pow2_at_least(N);
  // Below this many arms the scan is cheaper than the path of plays an update costs (docs/
  // performance.md: on knob sweeps of 105 and 210 arms the tournament replayed 1.3x slower and
  // 1.5x faster than the scan), so build() leaves the tournament off and the policy scans.
  static constexpr int kMinArms = 160;
  bool active;             // k >= kMinArms: argmin() may be asked
  int16_t winner[kNodes];  // packed arm; -1 for a leaf past the last arm
  double lo[kNodes];       // the subtree's window: every comparison in it holds for s in [lo, hi]
  double hi[kNodes];
  int leaves;  // (members set by build(), none initialised)

  // `min_arms`: tests build it for any k.
  NCCLBOT_HD void build(const ArmStatsT<N>& stats, int min_arms = kMinArms) {
    active = stats.arms.k >= min_arms;
    if (!active) return;
    leaves = pow2_at_least(stats.arms.k);
    for (int j = 0; j < leaves; ++j) {
      winner[leaves + j] = int16_t(j < stats.arms.k ? j : -1);
      lo[leaves + j] = -HUGE_VAL;
      hi[leaves + j] = HUGE_VAL;
    }
    for (int n = 1; n < leaves; ++n) stale(n);
  }
  // Arm j's mean or 1 / sqrt(N_j) changed: its path is played again at the next argmin.
  NCCLBOT_HD void moved(int j) {
    if (active)
      for (int n = (leaves + j) / 2; n >= 1; n /= 2) stale(n);
  }

  // lower_confidence_argmin(stats, inv, scale), k >= 1.
  NCCLBOT_HD int argmin(const ArmStatsT<N>& stats, const double* inv, double scale) {
    if (!(scale >= 0.0 && scale < HUGE_VAL)) return lower_confidence_argmin(stats, inv, scale);
    refresh(1, stats, inv, scale);
    return winner[1];
  }

 private:
  NCCLBOT_HD void stale(int n) {
    lo[n] = HUGE_VAL;
    hi[n] = -HUGE_VAL;
  }

  NCCLBOT_HD void refresh(int n, const ArmStatsT<N>& stats, const double* inv, double s) {
    if (lo[n] <= s && s <= hi[n]) return;  // a leaf's window is every scale
    refresh(2 * n, stats, inv, s);
    refresh(2 * n + 1, stats, inv, s);
    play(n, stats, inv, s);
  }

  NCCLBOT_HD void play(int n, const ArmStatsT<N>& stats, const double* inv, double s) {
    const int a = winner[2 * n], b = winner[2 * n + 1];  // a < b: the left subtree's arms come first
    double own_lo = -HUGE_VAL, own_hi = HUGE_VAL;
    if (b < 0) {  // past the last arm (only the right end of the tree holds such leaves)
      winner[n] = int16_t(a);
    } else {
      const double xa = stats.mean[a] - s * inv[a], xb = stats.mean[b] - s * inv[b];
      const int w = xb < xa ? b : a, o = w == a ? b : a;
      winner[n] = int16_t(w);
      certain_window(stats.mean[w], inv[w], stats.mean[o], inv[o], own_lo, own_hi);
      if (!(own_lo <= s && s <= own_hi)) own_lo = own_hi = s;
    }
    const double l = lo[2 * n] > lo[2 * n + 1] ? lo[2 * n] : lo[2 * n + 1];
    const double h = hi[2 * n] < hi[2 * n + 1] ? hi[2 * n] : hi[2 * n + 1];
    lo[n] = own_lo > l ? own_lo : l;
    hi[n] = own_hi < h ? own_hi : h;
  }

  // The scales s >= 0 at which arm w (mean mw, inverse root count iw) certainly stays ahead of arm
  // o: alpha - s * beta > 0 with the terms above (an empty window where it holds nowhere).
  NCCLBOT_HD static void certain_window(double mw, double iw, double mo, double io, double& l, double& h) {
    constexpr double kSlack = 64.0 * 0x1p-53, kInward = 1e-9;
    if (mw == mo && iw == io) {  // one line (knob arms that share a prior): equal everywhere, w is the lower
      l = -HUGE_VAL;
      h = HUGE_VAL;
      return;
    }
    const double alpha = (mo - mw) - kSlack * (fabs(mo) + fabs(mw));
    const double beta = (io - iw) + kSlack * (io + iw);
    // beta > 0: below alpha / beta; beta < 0: above it; beta = 0 (two unpulled arms): everywhere
    // when alpha > 0, else nowhere. Selects rather than branches: the sign is data.
    const double t = alpha / beta, inward = fabs(t) * kInward;
    const bool flat = beta == 0.0, everywhere = flat && alpha > 0.0;
    l = beta < 0.0 ? t + inward + 1e-300 : (flat && !everywhere ? HUGE_VAL : -HUGE_VAL);
    h = beta > 0.0 ? t - inward : (flat && !everywhere ? -HUGE_VAL : HUGE_VAL);
  }
};

// The 24-slot policies keep none: [[no_unique_address]] members of this type take no room.
template <int N>
struct KineticArgminT<N, false> {
  static constexpr bool kUsed = false;
};

}  // namespace ncclbot
