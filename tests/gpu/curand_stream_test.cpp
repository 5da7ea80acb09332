// cuRAND's device Philox4_32_10 and the host generator (core/philox.hpp) produce the same stream
// under the mapping documented there, so a replay draws the same numbers on the GPU and the CPU.
#include <gtest/gtest.h>

#include <random>

#include "gpu/curand_stream.hpp"
#include "gpu/skip_without_gpu.hpp"

using namespace ncclbot;

// Random123's known-answer vectors (examples/kat_vectors, philox4x32 10), evaluated in device code
// (Random123's Philox compiled by nvcc).
TEST(CurandStream, DeviceKnownAnswerVectors) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const std::vector<Philox4x32> ctr = {{{0, 0, 0, 0}},
                                       {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
                                       {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}};
  const std::vector<uint64_t> key = {0, 0xffffffffffffffffull, (uint64_t(0x299f31d0) << 32) | 0xa4093822u};
  const std::vector<Philox4x32> want = {{{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
                                        {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
                                        {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  const auto got = test::device_philox(ctr, key);
  for (size_t i = 0; i < want.size(); ++i)
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got[i].v[w], want[i].v[w]) << "vector " << i << " word " << w;
}

// The replay core's sample draws: word t of (seed, id) is the t-th curand() after
// curand_init(seed, id, 0), i.e. word t % 4 of philox_block(seed, id, t / 4, 0).
TEST(CurandStream, CurandWordsAreTheReplayDraws) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  std::mt19937_64 gen(20261130);
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t seed = gen(), id = gen();
    const int count = 4099;
    const auto words = test::curand_words(seed, id, 0, count);
    for (int t = 0; t < count; ++t)
      ASSERT_EQ(words[size_t(t)], philox_block(seed, id, uint32_t(t / 4), 0).v[t % 4])
          << "seed " << seed << " id " << id << " word " << t;
    // An offset that is not a multiple of 4 starts inside a block.
    const auto shifted = test::curand_words(seed, id, 5, 8);
    for (int t = 0; t < 8; ++t) ASSERT_EQ(shifted[size_t(t)], words[size_t(t + 5)]) << "offset word " << t;
  }
}

// The policy lanes: philox_block(seed, id, step, lane) is curand4() after
// curand_init(seed, id, 4 * (step + 2^32 * lane)), over the whole range of ids, steps and lanes.
TEST(CurandStream, Curand4BlocksAreThePolicyLanes) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 8; ++trial) {
    const uint64_t seed = gen();
    std::vector<uint64_t> ids, offsets;
    std::vector<uint32_t> steps, lanes;
    for (int i = 0; i < 4096; ++i) {
      const uint32_t step = i % 3 == 0 ? uint32_t(gen()) : uint32_t(gen() % 100000);
      // curand_init takes a 64-bit offset, so lanes below 2^30 are what it can name.
      const uint32_t lane = i % 5 == 0 ? uint32_t(gen() % (1u << 30)) : uint32_t(gen() % 8);
      ids.push_back(gen());
      steps.push_back(step);
      lanes.push_back(lane);
      offsets.push_back(4 * (uint64_t(step) + (uint64_t(lane) << 32)));
    }
    const auto blocks = test::curand4_blocks(seed, ids, offsets);
    for (size_t i = 0; i < ids.size(); ++i) {
      const Philox4x32 want = philox_block(seed, ids[i], steps[i], lanes[i]);
      for (int w = 0; w < 4; ++w)
        ASSERT_EQ(blocks[i].v[w], want.v[w]) << "seed " << seed << " id " << ids[i] << " step " << steps[i]
                                             << " lane " << lanes[i] << " word " << w;
    }
  }
}
