#include "ncclbot/hipipe/stage_cost.hpp"

#include <numeric>

#include "ncclbot/core/error.hpp"

namespace ncclbot::hipipe {

bool is_permutation_of_dimensions(const std::vector<int>& order, int num_dimensions) {
  if (static_cast<int>(order.size()) != num_dimensions) return false;
  std::vector<bool> seen(num_dimensions, false);
  for (int d : order) {
    if (d < 0 || d >= num_dimensions || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

std::vector<int> default_order(const Network& network) {
  std::vector<int> order(network.num_dimensions());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<StageCost> allreduce_stages(const Network& network, const std::vector<int>& rs_order) {
  const int D = network.num_dimensions();
  if (!is_permutation_of_dimensions(rs_order, D))
    throw UsageError("reduce-scatter order is not a permutation of the " + std::to_string(D) + " dimensions");
  std::vector<StageCost> stages(2 * D);
  double shrink = 1;  // prod of group sizes already reduce-scattered
  for (int j = 0; j < D; ++j) {
    const Dimension& dim = network.dimensions[rs_order[j]];
    const double p = dim.group_size;
    // 1 GB/s moves 1e3 bytes per us.
    const double b = (p - 1) / p / (dim.bandwidth_GBps * 1e3) / shrink;
    const double a = (p - 1) * dim.latency_us;
    stages[j] = {rs_order[j], Phase::kReduceScatter, a, b};
    stages[2 * D - 1 - j] = {rs_order[j], Phase::kAllGather, a, b};
    shrink *= p;
  }
  return stages;
}

}  // namespace ncclbot::hipipe
