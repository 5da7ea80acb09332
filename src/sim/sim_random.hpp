#pragma once
// The simulator's random draws: Philox4x32-10 keyed by (seed, fabric), one stream byte per kind of
// draw in the counter's top byte, so draws of different kinds never collide and every value is a pure
// function of its inputs.
#include <Random123/philox.h>

#include <cstdint>
#include <string>

#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::sim::random {

// Streams of the Philox counter (word 0, top byte).
inline constexpr uint32_t kStreamDeviation = 0xD1u;             // the algorithm x protocol deviations
inline constexpr uint32_t kStreamNoise = 0x5Au;                 // the samples of NCCL's own knob setting
inline constexpr uint32_t kStreamKnobDeviation = 0xC4u;         // the knob model's deviations
inline constexpr uint32_t kStreamKnobNoise = 0x6Bu;             // the samples of channel and chunk arms
inline constexpr uint32_t kStreamIndependentDeviation = 0xE7u;  // DeviationModel::kIndependent's factors

inline uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

inline r123::Philox4x32::ukey_type key_for(uint64_t seed, const std::string& fabric) {
  return {{uint32_t(seed), uint32_t(seed >> 32) ^ fnv1a(fabric)}};
}

// Uniform in (0, 1) from 24 random bits.
inline double unit(uint32_t x) {
  return (double(x >> 8) + 0.5) * (1.0 / 16777216.0);
}

inline double draw(const Range& r, double u) {
  return r.lo + (r.hi - r.lo) * u;
}

// Uniform draw number `what` of stream `stream` for (seed, fabric).
inline double uniform(uint64_t seed, const std::string& fabric, uint32_t stream, uint32_t what) {
  r123::Philox4x32 rng;
  const r123::Philox4x32::ctr_type ctr = {{stream << 24, what, 0u, 0u}};
  return unit(rng(ctr, key_for(seed, fabric))[0]);
}

}  // namespace ncclbot::sim::random
