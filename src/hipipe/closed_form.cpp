#include "ncclbot/hipipe/closed_form.hpp"

#include <algorithm>
#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/stage_cost.hpp"

namespace ncclbot::hipipe {

double sequential_allreduce_us(const Network& network, double bytes) {
  validate_problem(network, bytes);
  double total = 0;
  for (const StageCost& s : allreduce_stages(network, default_order(network))) total += s.time_us(bytes);
  return total;
}

double ring_allreduce_us(int ranks, double latency_us, double bandwidth_GBps, double bytes) {
  const double p = ranks;
  return 2 * (p - 1) * latency_us + 2 * (p - 1) / p * bytes / (bandwidth_GBps * 1e3);
}

double estimated_chunk_count(const Network& network, double bytes, int max_chunks) {
  validate_problem(network, bytes);
  if (max_chunks < 1) throw UsageError("max_chunks must be at least 1");
  const int D = network.num_dimensions();
  const auto stages = allreduce_stages(network, default_order(network));
  std::vector<double> dim_a(D, 0.0), dim_b(D, 0.0);
  double sum_b = 0;
  for (const StageCost& s : stages) {
    dim_a[s.dim] += s.a_us;
    dim_b[s.dim] += s.b_us_per_byte;
    sum_b += s.b_us_per_byte;
  }
  // The bottleneck is the dimension with the most work for the whole message (both its stages).
  int star = 0;
  for (int d = 1; d < D; ++d)
    if (dim_a[d] + dim_b[d] * bytes > dim_a[star] + dim_b[star] * bytes) star = d;
  if (dim_a[star] <= 0) return max_chunks;
  const double k = std::sqrt(std::max(0.0, sum_b - dim_b[star]) * bytes / dim_a[star]);
  return std::clamp(k, 1.0, static_cast<double>(max_chunks));
}

}  // namespace ncclbot::hipipe
