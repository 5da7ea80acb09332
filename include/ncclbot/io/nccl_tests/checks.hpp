#pragma once
// Consistency checks on one parsed run: the shape of the job from its device list, and whether
// the printed bandwidths agree with the size, the time and the collective's bus factor.
#include <optional>
#include <vector>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"

namespace ncclbot::nccl_tests {

struct Topology {
  int nodes = 0;
  int gpus_per_node = 0;
  int ranks() const { return nodes * gpus_per_node; }
};

// From "# Rank N ... on HOST" lines: distinct hosts are nodes, ranks per host the GPUs per node.
// nullopt when the list is absent or incomplete (ranks not exactly 0..n-1); an InputError when
// hosts carry different rank counts (no single gpus_per_node).
std::optional<Topology> topology_from_devices(const Run& run, const std::string& file);

// nccl-tests' busbw/algbw factor (doc/PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, alltoall, gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1.
double bus_factor(Collective c, int ranks);

// Warnings (appended to `out`, one per run and check, naming the first offending row) when
// algbw != size/time, busbw != algbw * factor, or the trailer's average disagrees with the rows.
void check_bandwidths(const Run& run, Collective c, int ranks, const std::string& file,
                      std::vector<Diagnostic>& out);

}  // namespace ncclbot::nccl_tests
