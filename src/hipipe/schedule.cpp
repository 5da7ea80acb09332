#include "ncclbot/hipipe/schedule.hpp"

namespace ncclbot::hipipe {

std::vector<double> dimension_busy_us(const Network& network, const Schedule& schedule) {
  std::vector<double> busy(network.num_dimensions(), 0.0);
  for (const Operation& op : schedule.ops) busy[op.dim] += op.end_us - op.start_us;
  return busy;
}

std::vector<double> dimension_data_us(const Network& network, const Schedule& schedule) {
  const int D = network.num_dimensions();
  std::vector<double> data(D, 0.0);
  for (int k = 0; k < schedule.num_chunks(); ++k) {
    const auto stages = allreduce_stages(network, schedule.rs_orders[k]);
    for (const StageCost& s : stages) data[s.dim] += s.b_us_per_byte * schedule.chunk_bytes[k];
  }
  return data;
}

}  // namespace ncclbot::hipipe
