#pragma once
// Seeded random multi-dimensional networks for property tests (raw mt19937 output mapped by hand,
// so the cases are the same with every standard library).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe::test {

inline double uniform(std::mt19937& rng, double lo, double hi) {
  return lo + (hi - lo) * (rng() / 4294967296.0);
}

inline Network random_network(std::mt19937& rng, int dims) {
  Network n;
  n.name = "random";
  for (int d = 0; d < dims; ++d) {
    const int p = 2 + static_cast<int>(rng() % 15);
    // Latencies from 0 (pure bandwidth) to 20 us, bandwidths from 10 to 800 GB/s.
    const double alpha = rng() % 5 == 0 ? 0.0 : uniform(rng, 0.2, 20.0);
    n.dimensions.push_back({"d" + std::to_string(d), p, alpha, uniform(rng, 10.0, 800.0)});
  }
  return n;
}

inline std::vector<double> test_sizes() {
  return {4096.0, 1048576.0, 67108864.0, 1073741824.0};
}

}  // namespace ncclbot::hipipe::test
