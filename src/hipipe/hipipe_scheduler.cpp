// HiPIPE as reconstructed: for each chunk count K near the closed-form estimate, take the
// pipelined list schedule's per-dimension service order, let the LP choose unequal chunk sizes for
// that order, re-schedule with the new sizes, and repeat while the order changes; keep the best.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/closed_form.hpp"
#include "ncclbot/hipipe/list_scheduler.hpp"
#include "ncclbot/hipipe/lp_chunk_sizes.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

namespace {

// The chunks of an LP solution, on their fixed orders and sequences.
struct SizedChunks {
  std::vector<double> bytes;
  std::vector<std::vector<int>> rs_orders;
  std::vector<std::vector<int>> sequences;
};

// The LP's chunks without the ones it left empty (under a byte): an empty chunk moves nothing and
// only adds its stages' latencies, so dropping it (and renumbering the operations) never makes the
// schedule slower, and the plan shows no chunk of 0 bytes. The largest chunk always stays.
SizedChunks without_empty_chunks(const Network& network, const std::vector<double>& bytes,
                                 const std::vector<std::vector<int>>& rs_orders,
                                 const std::vector<std::vector<int>>& sequences) {
  const int steps = 2 * network.num_dimensions();
  const int largest = static_cast<int>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
  std::vector<int> renumbered(bytes.size(), -1);
  SizedChunks out;
  double dropped = 0;
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    if (bytes[k] < 1.0 && static_cast<int>(k) != largest) {
      dropped += bytes[k];
      continue;
    }
    renumbered[k] = static_cast<int>(out.bytes.size());
    out.bytes.push_back(bytes[k]);
    out.rs_orders.push_back(rs_orders[k]);
  }
  out.bytes[renumbered[largest]] += dropped;  // the sizes still sum to the message
  for (const auto& seq : sequences) {
    out.sequences.emplace_back();
    for (int op : seq)
      if (const int k = renumbered[op / steps]; k >= 0)
        out.sequences.back().push_back(k * steps + op % steps);
  }
  return out;
}

// `bytes` on fixed orders and sequences, timed as a longest path without the empty chunks.
Schedule timed_without_empty_chunks(const Network& network, const std::vector<double>& bytes,
                                    const std::vector<std::vector<int>>& rs_orders,
                                    const std::vector<std::vector<int>>& sequences) {
  const SizedChunks sized = without_empty_chunks(network, bytes, rs_orders, sequences);
  return time_with_fixed_sequences(network, sized.bytes, sized.rs_orders, sized.sequences);
}

// LP sizes for a fixed order, refined; `start` is an equal-chunk list schedule. The refinement
// keeps all K chunks (an empty one may take bytes again in a later round); each schedule it keeps
// as the best so far has its empty chunks dropped.
Schedule refine_with_lp(const Network& network, double bytes, Schedule start,
                        const SchedulerOptions& options) {
  Schedule best = start;
  Schedule current = std::move(start);
  for (int round = 0; round < options.lp_refinements; ++round) {
    const auto sequences = dimension_sequences(network, current);
    const LpChunkSolution lp = solve_chunk_sizes_lp(network, bytes, current.rs_orders, sequences);
    // Re-derive the times from the sizes and the order, so reported times carry no LP tolerance.
    Schedule timed = timed_without_empty_chunks(network, lp.chunk_bytes, current.rs_orders, sequences);
    if (timed.makespan_us < best.makespan_us) best = std::move(timed);
    Schedule next = list_schedule(network, lp.chunk_bytes, current.rs_orders);
    const auto next_sequences = dimension_sequences(network, next);
    Schedule next_timed =
        timed_without_empty_chunks(network, next.chunk_bytes, next.rs_orders, next_sequences);
    if (next_timed.makespan_us < best.makespan_us) best = std::move(next_timed);
    if (next_sequences == sequences) break;
    current = std::move(next);
  }
  return best;
}

}  // namespace

Schedule schedule_hipipe_fixed_chunks(const Network& network, double bytes, int chunks,
                                      const SchedulerOptions& options) {
  validate_problem(network, bytes);
  validate_options(options);
  if (chunks < 1) throw UsageError("chunk count " + std::to_string(chunks) + " must be at least 1");
  const std::vector<double> equal(chunks, bytes / chunks);
  Schedule best = refine_with_lp(
      network, bytes,
      list_schedule(network, equal, std::vector<std::vector<int>>(chunks, default_order(network))), options);
  if (network.num_dimensions() > 1) {
    // Also start from Themis's per-chunk orders: the LP then sizes chunks on a balanced order.
    Schedule alt = refine_with_lp(
        network, bytes, list_schedule(network, equal, themis_orders(network, bytes, chunks)), options);
    if (alt.makespan_us < best.makespan_us) best = std::move(alt);
  }
  best.scheduler = "hipipe";
  return best;
}

std::vector<int> chunk_count_candidates(const Network& network, double bytes,
                                        const SchedulerOptions& options) {
  validate_options(options);
  const double estimate = estimated_chunk_count(network, bytes, options.max_chunks);
  const int lo = std::max(1, static_cast<int>(std::floor(estimate / 2)));
  const int hi = std::min(options.max_chunks, static_cast<int>(std::ceil(estimate * 2)));
  std::set<int> ks{1, static_cast<int>(std::lround(estimate))};
  if (hi - lo + 1 <= options.search_points) {
    for (int k = lo; k <= hi; ++k) ks.insert(k);
  } else {
    // Geometric spacing: the makespan is flat near the optimum, so relative steps suffice.
    for (int i = 0; i < options.search_points; ++i) {
      const double f =
          options.search_points == 1 ? 0.0 : static_cast<double>(i) / (options.search_points - 1);
      ks.insert(static_cast<int>(std::lround(lo * std::pow(static_cast<double>(hi) / lo, f))));
    }
  }
  return {ks.begin(), ks.end()};
}

Schedule schedule_hipipe(const Network& network, double bytes, const SchedulerOptions& options) {
  validate_problem(network, bytes);
  Schedule best;
  for (int k : chunk_count_candidates(network, bytes, options)) {
    Schedule s = schedule_hipipe_fixed_chunks(network, bytes, k, options);
    if (best.ops.empty() || s.makespan_us < best.makespan_us) best = std::move(s);
  }
  return best;
}

}  // namespace ncclbot::hipipe
