#pragma once
// A multi-dimensional network as ASTRA-sim's analytical model describes it: D dimensions (e.g.
// NVLink domain, scale-out rail, spine), each a ring of `group_size` ranks with a per-step latency
// and a per-rank, one-direction bandwidth ("busbw" for a switch or NVLS dimension).
#include <string>
#include <vector>

namespace ncclbot::hipipe {

struct Dimension {
  std::string name;           // "nvlink", "ib", ...: for tables and errors
  int group_size = 0;         // p_d: ranks in one group of this dimension
  double latency_us = 0;      // alpha_d: one ring step
  double bandwidth_GBps = 0;  // B_d: per rank, one direction, 1 GB/s = 1e9 B/s
};

struct Network {
  std::string name;
  std::vector<Dimension> dimensions;  // dimension 0 is visited first by the default order

  int num_dimensions() const { return static_cast<int>(dimensions.size()); }
  long long num_ranks() const;
};

// Throws UsageError naming the dimension and the reason: no dimensions, group size < 2, latency
// negative or not finite, bandwidth not positive or not finite.
void validate_network(const Network& network);

// Throws UsageError when `bytes` is zero or the network is invalid; an all-reduce of nothing has no
// schedule to compare.
void validate_problem(const Network& network, double bytes);

}  // namespace ncclbot::hipipe
