#pragma once
// One fabric and message size, every scheduler: makespans, per-dimension utilisation and chunk
// plans, as JSON and as a table. What `ncclbot hipipe` prints and the study aggregates.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

struct SchedulerResult {
  Schedule schedule;
  std::vector<double> utilisation;            // busy / makespan, per dimension
  std::vector<double> bandwidth_utilisation;  // time moving bytes / makespan, per dimension
};

struct Comparison {
  Network network;
  double bytes = 0;
  double estimated_chunks = 0;           // the closed-form K* HiPIPE searches around
  double sequential_us = 0;              // closed form of the unpipelined schedule
  std::vector<SchedulerResult> results;  // hierarchical, equal-chunk, themis, hipipe, equal-chunk-best

  const SchedulerResult& result(const std::string& scheduler) const;
  // (T_baseline - T_hipipe) / T_baseline.
  double hipipe_reduction_vs(const std::string& baseline) const;
};

// Runs every scheduler and checks each schedule with the feasibility checker (std::logic_error if
// one is infeasible: that is a bug, not bad input).
Comparison compare_schedulers(const Network& network, double bytes, const SchedulerOptions& options = {});

nlohmann::json comparison_json(const Comparison& comparison);
void print_comparison_table(const Comparison& comparison, std::ostream& os);

}  // namespace ncclbot::hipipe
