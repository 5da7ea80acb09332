#pragma once
// `bench-stats` as a library call (cli/replay_call.hpp has the pattern): the wall-clock time of the
// statistics engine on given inputs (bootstrap mean/p99 x percentile/BCa, exact permutation), so that
// scripts/bench_stats.py can time SciPy on the very same data. Each case runs once to warm up, then
// `repeat` times; the median is kept.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/json_input.hpp"

namespace ncclbot::cli {

struct BenchStatsCallOptions {
  int repeat = 5;        // timed runs per case, in [1, 1000]
  unsigned threads = 1;  // 0: all cores
};

struct BenchStatsCase {
  std::string name;
  double median_s = 0.0, median_cpu_s = 0.0;
  std::vector<double> runs_s;
  size_t n = 0;                          // values
  std::optional<uint64_t> resamples;     // bootstrap cases
  std::optional<uint64_t> sign_vectors;  // the exact permutation case
};

struct BenchStatsCallResult {
  unsigned threads = 1;
  int repeat = 5;
  std::vector<BenchStatsCase> cases;
};

// The input's fields: "x" (bootstrap data), "diffs" (permutation data), "resamples", "seed"; an
// InputError naming the input on a bad one, a UsageError on a bad option.
BenchStatsCallResult bench_stats_call(const BenchStatsCallOptions& options, const JsonInput& input);

// The JSON document `bench-stats` prints.
nlohmann::json bench_stats_document(const BenchStatsCallResult& result);

}  // namespace ncclbot::cli
