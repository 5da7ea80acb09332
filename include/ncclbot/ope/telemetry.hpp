#pragma once
// What the plugin did, from its decision logs (`ncclbot telemetry`, docs/ope.md): per context the
// calls, how often it departed from NCCL's pick, the measured mean latency, and the time saved
// against NCCL's own choice, estimated with the doubly robust estimator of off_policy.hpp for the
// target "NCCL's pick" (per call d_i = q(x, nccl) + [a_i = nccl] / p_i (r_i - q(x, nccl)) - r_i, so
// the saving of a context is the mean of d over its calls and the job's the sum over all calls).
// Intervals: percentile bootstrap over calls, resampled within each context (resample b from
// (seed, b) only), for every per-context and total number; learning curves give Wilson intervals
// for departure shares and normal intervals for mean latencies. A context whose log never shows
// NCCL's pick played has no estimate (no call can see that arm) and is left out of the totals; when
// no context has one, the totals' estimates are left out too.
#include <nlohmann/json.hpp>

#include "ncclbot/ope/off_policy.hpp"

namespace ncclbot {

struct TelemetryOptions {
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  int curve_buckets = 10;
};

nlohmann::json telemetry(const OpeData& data, const TelemetryOptions& options);

}  // namespace ncclbot
