// Themis's offline greedy dimension ordering, as astra-sim's OfflineGreedy.cc does it: keep a load
// per dimension (MB at dimension 0's bandwidth), and send each chunk's reduce-scatter through the
// least-loaded dimension first, so the dimension that sees the most bytes is the idle one.
#include <algorithm>
#include <numeric>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/list_scheduler.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

std::vector<std::vector<int>> themis_orders(const Network& network, double bytes, int chunks) {
  const int D = network.num_dimensions();
  const double b0 = network.dimensions[0].bandwidth_GBps;
  std::vector<double> load(D, 0.0);
  std::vector<std::vector<int>> orders;
  for (int k = 0; k < chunks; ++k) {
    std::vector<int> order(D);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return load[x] < load[y]; });
    double size_mb = bytes / chunks / 1e6;
    for (int d : order) {
      const double p = network.dimensions[d].group_size;
      load[d] += size_mb * ((p - 1) / p) / (network.dimensions[d].bandwidth_GBps / b0);
      size_mb /= p;
    }
    orders.push_back(std::move(order));
  }
  return orders;
}

Schedule schedule_themis_greedy(const Network& network, double bytes, int chunks) {
  validate_problem(network, bytes);
  if (chunks < 1) throw UsageError("chunk count " + std::to_string(chunks) + " must be at least 1");
  Schedule s = list_schedule(network, std::vector<double>(chunks, bytes / chunks),
                             themis_orders(network, bytes, chunks));
  s.scheduler = "themis";
  return s;
}

}  // namespace ncclbot::hipipe
