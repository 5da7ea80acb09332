#pragma once
// Percentile bootstrap intervals whose resamples are drawn and evaluated on the CUDA device
// (device_bootstrap, replay/device_replay.hpp: bit for bit the distribution bootstrap_interval()
// keeps; tests/gpu/cuda_engine_test.cpp checks it), the interval then taken on the host as the
// library takes it. A study on the cuda backend computes its report's intervals this way
// (run/run_study.cpp), with the same numbers as on the CPU.
#include <span>

#include "ncclbot/stats/bootstrap.hpp"

namespace ncclbot {

// Whether this build has the CUDA kernels (else bootstrap_interval_on_device is the CPU's).
bool bootstrap_on_device_built();

// bootstrap_interval(x, options), its resamples on the device where the interval is a percentile
// one (percentile_interval_computable_elsewhere); anything else runs on the CPU as
// bootstrap_interval(), which also raises the library's errors.
BootstrapResult bootstrap_interval_on_device(std::span<const double> x, const BootstrapOptions& options);

}  // namespace ncclbot
