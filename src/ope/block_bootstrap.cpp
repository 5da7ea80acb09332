#include "ncclbot/ope/block_bootstrap.hpp"

#include "ncclbot/core/cuda_probe.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#ifdef NCCLBOT_HAVE_CUDA
#include "ncclbot/replay/device_replay.hpp"
#endif

namespace ncclbot {

uint64_t context_seed(uint64_t seed, size_t x) {
  return seed ^ (uint64_t(x) * 0x9e3779b97f4a7c15ull);
}

ResampleBackend parse_resample_backend(const std::string& text, const std::string& option) {
  if (text == "cpu") return ResampleBackend::cpu;
  if (text != "cuda") throw UsageError(option + " must be cpu or cuda, not '" + text + "'");
#ifndef NCCLBOT_HAVE_CUDA
  throw UsageError(option + " cuda: this build has no CUDA kernels");
#else
  if (const CudaProbe probe = probe_cuda(); probe.usable_devices == 0)
    throw UsageError(option + " cuda: no usable CUDA device (" + probe.reason + ")");
  return ResampleBackend::cuda;
#endif
}

std::vector<double> block_bootstrap_sums(std::span<const double> columns, size_t k, uint64_t seed,
                                         int resamples, unsigned threads, ResampleBackend backend) {
  const double blocks = double(columns.size() / k);
  std::vector<double> out;
  if (backend == ResampleBackend::cuda) {
#ifdef NCCLBOT_HAVE_CUDA
    // theta[c][b]: column c's mean in resample b, the same draws for every column.
    const std::vector<double> theta =
        device_bootstrap(columns, int(k), BootstrapStatistic::mean, uint64_t(resamples), seed);
    out.resize(theta.size());
    for (size_t c = 0; c < k; ++c)
      for (size_t b = 0; b < size_t(resamples); ++b) out[b * k + c] = theta[c * size_t(resamples) + b];
#else
    throw UsageError("--backend cuda: this build has no CUDA kernels");
#endif
  } else {
    out = bootstrap_column_means(columns, k, seed, 0, uint64_t(resamples), threads);
  }
  for (double& v : out) v *= blocks;
  return out;
}

}  // namespace ncclbot
