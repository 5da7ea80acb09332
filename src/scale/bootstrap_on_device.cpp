#include "ncclbot/scale/bootstrap_on_device.hpp"

#include <vector>

#include "ncclbot/replay/device_replay.hpp"
#include "ncclbot/scale/bootstrap_range.hpp"

namespace ncclbot {

bool bootstrap_on_device_built() {
#ifdef NCCLBOT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

BootstrapResult bootstrap_interval_on_device(std::span<const double> x, const BootstrapOptions& options) {
#ifdef NCCLBOT_HAVE_CUDA
  if (percentile_interval_computable_elsewhere(x, options)) {
    std::vector<double> theta =
        device_bootstrap(x, 1, options.statistic, options.resamples, options.seed, options.threshold);
    return percentile_interval_from_distribution(x, std::move(theta), options);
  }
#endif
  return bootstrap_interval(x, options);
}

}  // namespace ncclbot
