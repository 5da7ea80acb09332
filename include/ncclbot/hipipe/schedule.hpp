#pragma once
// A schedule of a chunked hierarchical all-reduce: the chunk sizes, each chunk's dimension order,
// and a start/end time for every (chunk, stage) operation. Every scheduler returns one, and the
// feasibility checker validates any of them against the same network model.
#include <string>
#include <vector>

#include "ncclbot/hipipe/stage_cost.hpp"

namespace ncclbot::hipipe {

struct Operation {
  int chunk = 0;
  int step = 0;  // 0..2D-1: position in the chunk's stage list
  int dim = 0;
  Phase phase = Phase::kReduceScatter;
  double start_us = 0;
  double end_us = 0;
};

struct Schedule {
  std::string scheduler;
  std::vector<double> chunk_bytes;          // sums to the message size
  std::vector<std::vector<int>> rs_orders;  // per chunk: reduce-scatter order of dimensions
  std::vector<Operation> ops;               // chunk-major: ops[k * 2D + step]
  double makespan_us = 0;

  int num_chunks() const { return static_cast<int>(chunk_bytes.size()); }
};

// Time each dimension spends on any operation (latency included), and the part of it spent moving
// bytes (the b * s term only): utilisation is busy / makespan, bandwidth utilisation data / makespan.
std::vector<double> dimension_busy_us(const Network& network, const Schedule& schedule);
std::vector<double> dimension_data_us(const Network& network, const Schedule& schedule);

}  // namespace ncclbot::hipipe
