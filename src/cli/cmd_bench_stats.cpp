// `ncclbot bench-stats`: wall-clock time of the statistics engine on given inputs, so that
// scripts/bench_stats.py can time SciPy on the very same data and print the ratio. Each case runs
// once to warm up, then --repeat times; the median is reported. The library call:
// cli/bench_stats_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bench_stats_call.hpp"
#include "cli/command.hpp"
#include "cli/json_input.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace bench_stats_command {

struct BenchStatsOptions {
  std::string input;
  BenchStatsCallOptions call;
  bool json = true;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<BenchStatsOptions>();
  app.add_option("--input,-i", opt->input,
                 "JSON with \"x\" (bootstrap data), \"diffs\" (permutation data) and \"resamples\"")
      ->required();
  app.add_option("--repeat", opt->call.repeat, "timed runs per case (after one warm-up)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", opt->call.threads, "worker threads (0 = all cores)");
  app.add_flag("--json", opt->json, "accepted for symmetry: the output is always one JSON document");
  return [opt] {
    const BenchStatsCallResult r = bench_stats_call(opt->call, JsonInput::read(opt->input));
    for (const BenchStatsCase& c : r.cases)
      command_err() << c.name << ": median " << c.median_s << " s wall, " << c.median_cpu_s << " s CPU over "
                    << r.repeat << " runs\n";
    command_out() << bench_stats_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"bench-stats", "time bootstrap and exact permutation on given data (JSON)", setup});

}  // namespace bench_stats_command
}  // namespace ncclbot::cli
