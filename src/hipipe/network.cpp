#include "ncclbot/hipipe/network.hpp"

#include <cmath>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::hipipe {

long long Network::num_ranks() const {
  long long ranks = 1;
  for (const auto& d : dimensions) ranks *= d.group_size;
  return ranks;
}

void validate_network(const Network& network) {
  const std::string where = network.name.empty() ? std::string("network") : "network '" + network.name + "'";
  if (network.dimensions.empty())
    throw UsageError(where + ": no dimensions (one rank has nothing to all-reduce)");
  for (std::size_t i = 0; i < network.dimensions.size(); ++i) {
    const Dimension& d = network.dimensions[i];
    const std::string dim =
        where + ", dimension " + std::to_string(i) + (d.name.empty() ? "" : " '" + d.name + "'");
    if (d.group_size < 2)
      throw UsageError(dim + ": group size " + std::to_string(d.group_size) +
                       " (a dimension needs at least 2 ranks; drop it instead)");
    if (!std::isfinite(d.latency_us) || d.latency_us < 0)
      throw UsageError(dim + ": latency " + std::to_string(d.latency_us) + " us must be finite and >= 0");
    if (!std::isfinite(d.bandwidth_GBps) || d.bandwidth_GBps <= 0)
      throw UsageError(dim + ": bandwidth " + std::to_string(d.bandwidth_GBps) +
                       " GB/s must be finite and > 0");
  }
}

void validate_problem(const Network& network, double bytes) {
  validate_network(network);
  if (!std::isfinite(bytes) || bytes <= 0)
    throw UsageError("message size " + format_double(bytes) + " B: must be a positive number of bytes");
  if (bytes > kMaxMessageBytes)
    throw UsageError("message size " + format_double(bytes) + " B: above the largest the model takes, " +
                     kMaxMessageText);
}

}  // namespace ncclbot::hipipe
