#pragma once
// Sets of a context's arm indices with room for N arms, for code that holds any number of arms (the
// policies, the replay): ArmIndexSet<N> is a plain array of 32-bit words (no initialisers, so it can
// live in the policies' unions), and ArmMaskT<N> is what a context's valid arms come in: NCCL's
// 32-bit ArmMask up to 32 arms (so a slot-shaped context keeps its type and its bits), an
// ArmIndexSet beyond. Both answer has, set, clear, any, empty and count.
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

template <int N>
struct ArmIndexSet {
  static_assert(N >= 1, "a set has room for at least one arm");
  static constexpr int kWords = (N + 31) / 32;
  uint32_t words[kWords];

  NCCLBOT_HD constexpr void clear_all() {
    for (int i = 0; i < kWords; ++i) words[i] = 0;
  }
  NCCLBOT_HD constexpr bool has(int j) const { return (words[j >> 5] >> (j & 31)) & 1u; }
  NCCLBOT_HD constexpr void set(int j) { words[j >> 5] |= 1u << (j & 31); }
  NCCLBOT_HD constexpr void clear(int j) { words[j >> 5] &= ~(1u << (j & 31)); }
  NCCLBOT_HD constexpr bool any() const {
    uint32_t u = 0;
    for (int i = 0; i < kWords; ++i) u |= words[i];
    return u != 0;
  }
  NCCLBOT_HD constexpr bool empty() const { return !any(); }
  NCCLBOT_HD constexpr int count() const {
    int n = 0;
    for (int i = 0; i < kWords; ++i)
      for (uint32_t w = words[i]; w != 0; w &= w - 1) ++n;
    return n;
  }
  // An empty set (the type itself has no initialisers).
  NCCLBOT_HD static constexpr ArmIndexSet none() {
    ArmIndexSet s{};
    return s;
  }
};

// A packed arm index or a slot of a context with room for N arms: a byte while N fits one.
template <int N>
using ArmIndexT = std::conditional_t<(N <= 127), int8_t, int16_t>;

template <int N>
using ArmMaskT = std::conditional_t<(N <= 32), ArmMask, ArmIndexSet<N>>;

static_assert(std::is_trivially_copyable_v<ArmIndexSet<512>>, "index sets are plain data");
static_assert(std::is_trivial_v<ArmIndexSet<512>>, "index sets live in unions");

}  // namespace ncclbot
