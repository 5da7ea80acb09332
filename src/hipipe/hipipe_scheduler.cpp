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

// LP sizes for a fixed order, refined; `start` is an equal-chunk list schedule.
Schedule refine_with_lp(const Network& network, double bytes, Schedule start,
                        const SchedulerOptions& options) {
  Schedule best = start;
  Schedule current = std::move(start);
  for (int round = 0; round < options.lp_refinements; ++round) {
    const auto sequences = dimension_sequences(network, current);
    const LpChunkSolution lp = solve_chunk_sizes_lp(network, bytes, current.rs_orders, sequences);
    // Re-derive the times from the sizes and the order, so reported times carry no LP tolerance.
    Schedule timed = time_with_fixed_sequences(network, lp.chunk_bytes, current.rs_orders, sequences);
    if (timed.makespan_us < best.makespan_us) best = timed;
    Schedule next = list_schedule(network, lp.chunk_bytes, current.rs_orders);
    if (next.makespan_us < best.makespan_us) best = next;
    if (dimension_sequences(network, next) == sequences) break;
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
