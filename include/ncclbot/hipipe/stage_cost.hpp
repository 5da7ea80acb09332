#pragma once
// Cost of one stage of a hierarchical all-reduce on one chunk. A chunk of s bytes visits the
// dimensions in a reduce-scatter order pi_0..pi_{D-1}, then all-gathers in the reverse order.
// Entering dimension pi_j it holds s / prod_{i<j} p_{pi_i} bytes, and a ring there costs
//   (p-1)*alpha + (p-1)/p * bytes_held / B
// for the reduce-scatter and the same again for the all-gather on the same dimension.
#include <vector>

#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe {

enum class Phase { kReduceScatter, kAllGather };

// One stage's time as a + b * chunk_bytes (a in us, b in us per byte of the whole chunk).
struct StageCost {
  int dim = 0;
  Phase phase = Phase::kReduceScatter;
  double a_us = 0;
  double b_us_per_byte = 0;

  double time_us(double chunk_bytes) const { return a_us + b_us_per_byte * chunk_bytes; }
};

// The 2D stages of one chunk for a reduce-scatter order (a permutation of 0..D-1): RS along the
// order, then AG along the reverse order.
std::vector<StageCost> allreduce_stages(const Network& network, const std::vector<int>& rs_order);

// 0, 1, ..., D-1: BlueConnect's and ASTRA-sim's fixed order (innermost dimension first).
std::vector<int> default_order(const Network& network);

// True when `order` is a permutation of 0..D-1.
bool is_permutation_of_dimensions(const std::vector<int>& order, int num_dimensions);

}  // namespace ncclbot::hipipe
