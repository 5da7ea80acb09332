#pragma once
// `bench` as a library call (cli/replay_call.hpp has the pattern): replay throughput (policy steps
// per second) of a backend, per policy, arm count and width (CPU threads or CUDA block), on a
// synthetic sweep (bench/bench_sweep.hpp); typed options in, one row per case out.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot::cli {

// The synthetic sweep's call dynamics for --observation on (the default preset's), nullopt for off;
// a UsageError for anything else.
std::optional<SweepDynamics> bench_dynamics(const std::string& observation);

// Every policy the plugin can run, by name (at its defaults), in registry order.
std::vector<std::string> live_policy_names();

struct BenchRow {
  std::string policy;
  int arms = 0;
  std::string backend;
  int threads = 0;           // CPU threads; 0 on the CUDA backend
  std::optional<int> block;  // the CUDA block asked for (128 by default)
  double steps_per_s = 0.0, steps_per_cpu_s = 0.0, median_s = 0.0, min_s = 0.0, max_s = 0.0;
};

struct BenchCallOptions {
  std::string backend = "cpu";  // cpu or cuda
  std::vector<std::string> policies = live_policy_names();
  std::vector<int> arms = {6, 12, 21};  // valid arms per context; above 21 knob arms, up to 512
  std::vector<int> threads;             // empty: 1 and all cores
  std::vector<int> cuda_blocks;         // with cuda: threads per block (empty: 128)
  int contexts = 32, samples = 8, seeds = 4, horizon = 4096, delay = 0;
  int repetitions = 5;                          // timed, the median kept
  std::string observation = "off";              // on: the default preset's call dynamics
  std::function<void(const BenchRow&)> on_row;  // told of each row as it is timed, if set
};

struct BenchCallResult {
  nlohmann::json workload;  // the options that set the work
  nlohmann::json device;    // the CUDA device the kernels ran on (null on the CPU)
  std::vector<BenchRow> rows;
};

// UsageError on a bad option (a backend, a block, a policy).
BenchCallResult bench_call(const BenchCallOptions& options);

// The JSON document `bench --json` prints.
nlohmann::json bench_document(const BenchCallResult& result);

}  // namespace ncclbot::cli
