#pragma once
// What the plugin did, from its decision logs (`ncclbot telemetry`, docs/ope.md): per context the
// calls, how often it departed from NCCL's pick, the measured mean latency, and the time saved
// against NCCL's own choice, estimated with the doubly robust estimator of off_policy.hpp for the
// target "NCCL's pick" (per call d_i = q(x, nccl) + [a_i = nccl] / p_i (r_i - q(x, nccl)) - r_i, so
// the saving of a context is the mean of d over its calls and the job's the sum over all calls).
// It reads the log as blocks (ope/log_blocks.hpp). Intervals: percentile block bootstrap within
// each context (ope/block_bootstrap.hpp), for every per-context and total number; learning curves,
// in buckets of whole blocks, give Wilson intervals for departure shares and normal intervals for
// mean latencies (calls in a bucket taken as independent). A context whose log never shows
// NCCL's pick played has no estimate (no call can see that arm) and is left out of the totals; when
// no context has one, the totals' estimates are left out too.
#include <nlohmann/json.hpp>

#include "ncclbot/ope/log_blocks.hpp"

namespace ncclbot {

struct TelemetryOptions {
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  int curve_buckets = 10;
  unsigned threads = 0;                            // 0 = all cores; the numbers do not depend on it
  ResampleBackend backend = ResampleBackend::cpu;  // nor on this
};

nlohmann::json telemetry(const LogBlocks& data, const TelemetryOptions& options);

}  // namespace ncclbot
