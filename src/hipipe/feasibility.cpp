#include "ncclbot/hipipe/feasibility.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ncclbot::hipipe {

namespace {
// Times are sums of a few hundred terms of similar size: a relative slack of 1e-9 of the makespan
// absorbs rounding (and GLPK's tolerances never reach the reported times, which are re-derived).
double slack(double scale) {
  return 1e-9 * std::max(1.0, std::abs(scale));
}
}  // namespace

std::vector<std::string> schedule_violations(const Network& network, double bytes, const Schedule& schedule,
                                             int max_reports) {
  std::vector<std::string> out;
  auto report = [&](const std::string& line) {
    if (static_cast<int>(out.size()) < max_reports) out.push_back(line);
  };
  const int D = network.num_dimensions();
  const int K = schedule.num_chunks();
  if (K < 1) return {"no chunks"};
  if (static_cast<int>(schedule.rs_orders.size()) != K) return {"one dimension order per chunk expected"};
  if (static_cast<int>(schedule.ops.size()) != K * 2 * D)
    return {"expected " + std::to_string(K * 2 * D) + " operations, got " +
            std::to_string(schedule.ops.size())};

  double total = 0;
  for (int k = 0; k < K; ++k) {
    const double s = schedule.chunk_bytes[k];
    if (!(s >= -slack(bytes))) report("chunk " + std::to_string(k) + " has negative size");
    total += s;
  }
  if (std::abs(total - bytes) > 1e-9 * bytes)
    report("chunk sizes sum to " + std::to_string(total) + " B, not " + std::to_string(bytes) + " B");

  double last_end = 0;
  for (const Operation& op : schedule.ops) last_end = std::max(last_end, op.end_us);
  const double tol = slack(std::max(last_end, schedule.makespan_us));
  if (std::abs(last_end - schedule.makespan_us) > tol)
    report("makespan " + std::to_string(schedule.makespan_us) + " us differs from the last end " +
           std::to_string(last_end) + " us");

  for (int k = 0; k < K; ++k) {
    if (!is_permutation_of_dimensions(schedule.rs_orders[k], D)) {
      report("chunk " + std::to_string(k) + ": order is not a permutation of the dimensions");
      continue;
    }
    const auto stages = allreduce_stages(network, schedule.rs_orders[k]);
    for (int j = 0; j < 2 * D; ++j) {
      const Operation& op = schedule.ops[k * 2 * D + j];
      std::ostringstream where;
      where << "chunk " << k << " step " << j;
      if (op.chunk != k || op.step != j) report(where.str() + ": operation out of place");
      if (op.dim != stages[j].dim || op.phase != stages[j].phase)
        report(where.str() + ": runs on the wrong dimension or phase");
      if (op.start_us < -tol) report(where.str() + ": starts before time 0");
      const double expected = stages[j].time_us(schedule.chunk_bytes[k]);
      if (std::abs((op.end_us - op.start_us) - expected) > tol)
        report(where.str() + ": lasts " + std::to_string(op.end_us - op.start_us) + " us, model says " +
               std::to_string(expected) + " us");
      if (j > 0 && op.start_us < schedule.ops[k * 2 * D + j - 1].end_us - tol)
        report(where.str() + ": starts before the chunk's previous stage ends");
    }
  }

  for (int d = 0; d < D; ++d) {
    std::vector<const Operation*> on_dim;
    for (const Operation& op : schedule.ops)
      if (op.dim == d) on_dim.push_back(&op);
    std::stable_sort(on_dim.begin(), on_dim.end(), [](const Operation* x, const Operation* y) {
      return x->start_us < y->start_us || (x->start_us == y->start_us && x->end_us < y->end_us);
    });
    for (std::size_t i = 1; i < on_dim.size(); ++i)
      if (on_dim[i]->start_us < on_dim[i - 1]->end_us - tol) {
        std::ostringstream line;
        line << "dimension " << d << " serves chunk " << on_dim[i - 1]->chunk << " step "
             << on_dim[i - 1]->step << " and chunk " << on_dim[i]->chunk << " step " << on_dim[i]->step
             << " at once";
        report(line.str());
      }
  }
  return out;
}

}  // namespace ncclbot::hipipe
