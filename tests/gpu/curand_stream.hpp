#pragma once
// cuRAND's Philox4_32_10 run on the device, for comparing its stream with the host generator
// (core/philox.hpp). Each call launches one small kernel; CUDA failures throw std::runtime_error.
#include <cstdint>
#include <vector>

#include "ncclbot/core/philox.hpp"

namespace ncclbot::test {

// `count` successive curand() outputs after curand_init(seed, subsequence, offset).
std::vector<uint32_t> curand_words(uint64_t seed, uint64_t subsequence, uint64_t offset, int count);
// curand4() right after curand_init(seed, subsequence, offset), for each (subsequence, offset).
std::vector<Philox4x32> curand4_blocks(uint64_t seed, const std::vector<uint64_t>& subsequences,
                                       const std::vector<uint64_t>& offsets);
// philox4x32_10(counter, key) evaluated in device code (where core/philox.hpp calls cuRAND's rounds).
std::vector<Philox4x32> device_philox(const std::vector<Philox4x32>& counters,
                                      const std::vector<uint64_t>& keys);

}  // namespace ncclbot::test
