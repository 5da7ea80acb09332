#include "ncclbot/hipipe/predicted_time.hpp"

#include <map>
#include <mutex>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::hipipe {

double hipipe_predicted_time_us(const FabricPreset& fabric, Collective collective, int nodes,
                                int gpus_per_node, std::uint64_t bytes, const SchedulerOptions& options) {
  if (collective != Collective::kAllReduce)
    throw UsageError("HiPIPE models all-reduce only, not " + std::string(collective_name(collective)));
  if (bytes == 0) throw UsageError("message size 0 B: HiPIPE needs a positive size");
  const Network network = build_network(fabric, nodes, gpus_per_node);
  return schedule_hipipe(network, static_cast<double>(bytes), options).makespan_us;
}

double hipipe_predicted_time_us(std::string_view fabric, Collective collective, int nodes, int gpus_per_node,
                                std::uint64_t bytes, const SchedulerOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, FabricPreset, std::less<>> cache;
  FabricPreset preset;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(fabric);
    if (it == cache.end()) it = cache.emplace(std::string(fabric), load_fabric_preset(fabric)).first;
    preset = it->second;
  }
  return hipipe_predicted_time_us(preset, collective, nodes, gpus_per_node, bytes, options);
}

}  // namespace ncclbot::hipipe
