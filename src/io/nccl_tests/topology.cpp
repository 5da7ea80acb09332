#include <map>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"

namespace ncclbot::nccl_tests {

std::optional<Topology> topology_from_devices(const Run& run, const std::string& file) {
  const auto& devs = run.devices;
  if (devs.empty()) return std::nullopt;
  // The parser guarantees increasing ranks; complete means exactly 0..n-1.
  if (devs.front().rank != 0 || devs.back().rank != int(devs.size()) - 1) return std::nullopt;
  std::map<std::string, int> per_host;
  for (const auto& d : devs) ++per_host[d.host];
  const int gpus = per_host.begin()->second;
  for (const auto& [host, n] : per_host)
    if (n != gpus)
      throw InputError(file, devs.front().line,
                       "device list gives host " + per_host.begin()->first + " " + std::to_string(gpus) +
                           " ranks but host " + host + " " + std::to_string(n) +
                           ": no single GPUs-per-node value for the sweep");
  return Topology{int(per_host.size()), gpus};
}

}  // namespace ncclbot::nccl_tests
