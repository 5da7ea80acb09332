#pragma once
// The schedulers compared, all on the same network model and the same list-scheduling engine:
//  - hierarchical: BlueConnect / hierarchical ring, one chunk, innermost dimension first;
//  - equal-chunk: ASTRA-sim's baseline, K equal chunks, fixed order, pipelined;
//  - themis: Themis's offline greedy, K equal chunks, each chunk's order chosen by dimension load;
//  - hipipe: K searched around the closed-form estimate, LP-optimal unequal chunk sizes;
//  - equal-chunk-best: an ablation, equal chunks at the best K of HiPIPE's search range (how much
//    of HiPIPE's gain comes from choosing K rather than from unequal sizes).
#include <string>
#include <vector>

#include "ncclbot/hipipe/schedule.hpp"

namespace ncclbot::hipipe {

struct SchedulerOptions {
  int baseline_chunks = 4;  // ASTRA-sim's shipped HGX-H100 config: preferred-dataset-splits = 4
  int max_chunks = 64;      // upper end of HiPIPE's chunk-count search
  int search_points = 24;   // at most this many K values around the estimate
  int lp_refinements = 3;   // LP -> re-schedule -> LP rounds per K (stops when the order settles)
};

void validate_options(const SchedulerOptions& options);

Schedule schedule_hierarchical(const Network& network, double bytes);
Schedule schedule_equal_chunks(const Network& network, double bytes, int chunks);
Schedule schedule_themis_greedy(const Network& network, double bytes, int chunks);

// Themis's per-chunk reduce-scatter orders for `chunks` equal chunks (all-gather runs them reversed).
std::vector<std::vector<int>> themis_orders(const Network& network, double bytes, int chunks);

// HiPIPE for one chunk count: LP sizes on the equal-chunk order, refined while the order changes.
// Never worse than schedule_equal_chunks(network, bytes, chunks).
Schedule schedule_hipipe_fixed_chunks(const Network& network, double bytes, int chunks,
                                      const SchedulerOptions& options = {});

// The K values HiPIPE tries: 1, and up to search_points values in [K*/2, 2K*] within [1, max].
std::vector<int> chunk_count_candidates(const Network& network, double bytes,
                                        const SchedulerOptions& options);

Schedule schedule_hipipe(const Network& network, double bytes, const SchedulerOptions& options = {});
Schedule schedule_equal_chunks_best(const Network& network, double bytes,
                                    const SchedulerOptions& options = {});

// All five, in the order above.
std::vector<Schedule> schedule_all(const Network& network, double bytes,
                                   const SchedulerOptions& options = {});

}  // namespace ncclbot::hipipe
