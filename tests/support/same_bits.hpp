#pragma once
// Bit-for-bit equality of doubles, the standard the engines' determinism tests hold results to
// (== would accept -0.0 for 0.0 and reject NaN for NaN).
#include <cstring>

namespace ncclbot::test {

inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace ncclbot::test
