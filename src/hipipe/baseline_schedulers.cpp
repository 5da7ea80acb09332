// The schedulers HiPIPE is compared against, and the list of all of them.
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/list_scheduler.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

void validate_options(const SchedulerOptions& options) {
  if (options.baseline_chunks < 1)
    throw UsageError("baseline chunk count " + std::to_string(options.baseline_chunks) +
                     " must be at least 1");
  if (options.max_chunks < 1)
    throw UsageError("maximum chunk count " + std::to_string(options.max_chunks) + " must be at least 1");
  if (options.max_chunks > 4096)
    throw UsageError("maximum chunk count " + std::to_string(options.max_chunks) + " is above 4096");
  if (options.search_points < 1) throw UsageError("search points must be at least 1");
  if (options.lp_refinements < 1) throw UsageError("LP refinements must be at least 1");
}

Schedule schedule_equal_chunks(const Network& network, double bytes, int chunks) {
  validate_problem(network, bytes);
  if (chunks < 1) throw UsageError("chunk count " + std::to_string(chunks) + " must be at least 1");
  Schedule s = list_schedule(network, std::vector<double>(chunks, bytes / chunks),
                             std::vector<std::vector<int>>(chunks, default_order(network)));
  s.scheduler = "equal-chunk";
  return s;
}

Schedule schedule_hierarchical(const Network& network, double bytes) {
  Schedule s = schedule_equal_chunks(network, bytes, 1);
  s.scheduler = "hierarchical";
  return s;
}

Schedule schedule_equal_chunks_best(const Network& network, double bytes, const SchedulerOptions& options) {
  validate_options(options);
  Schedule best;
  for (int k : chunk_count_candidates(network, bytes, options)) {
    Schedule s = schedule_equal_chunks(network, bytes, k);
    if (best.ops.empty() || s.makespan_us < best.makespan_us) best = std::move(s);
  }
  best.scheduler = "equal-chunk-best";
  return best;
}

std::vector<Schedule> schedule_all(const Network& network, double bytes, const SchedulerOptions& options) {
  validate_options(options);
  validate_problem(network, bytes);
  return {schedule_hierarchical(network, bytes),
          schedule_equal_chunks(network, bytes, options.baseline_chunks),
          schedule_themis_greedy(network, bytes, options.baseline_chunks),
          schedule_hipipe(network, bytes, options), schedule_equal_chunks_best(network, bytes, options)};
}

}  // namespace ncclbot::hipipe
