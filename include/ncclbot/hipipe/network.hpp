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

// The largest all-reduce the model takes: 1 TiB per rank, as the simulator's and `plan`'s sizes. No
// GPU holds a larger buffer, and the chunk-size LP is tested well conditioned up to it.
inline constexpr double kMaxMessageBytes = 1099511627776.0;  // 2^40
inline constexpr const char* kMaxMessageText = "1 TiB (1099511627776 B)";

// Throws UsageError when `bytes` is zero, above kMaxMessageBytes, or the network is invalid; an
// all-reduce of nothing has no schedule to compare.
void validate_problem(const Network& network, double bytes);

}  // namespace ncclbot::hipipe
