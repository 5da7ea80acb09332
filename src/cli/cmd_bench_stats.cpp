// `ncclbot bench-stats`: wall-clock time of the statistics engine on given inputs, so that
// scripts/bench_stats.py can time SciPy on the very same data and print the ratio. Each case runs
// once to warm up, then --repeat times; the median is reported.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/json_input.hpp"
#include "ncclbot/bench/harness.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"

namespace ncclbot::cli {
namespace bench_stats_command {

struct BenchStatsOptions {
  std::string input;
  int repeat = 5;
  unsigned threads = 1;
  bool json = true;
};

// One case through the benchmark harness: a warm-up run, then `repeat` timed runs.
template <class F>
nlohmann::json time_case(const std::string& name, int repeat, F&& work) {
  volatile double sink = 0;
  const BenchTiming t = measure([&] { sink = work(); }, BenchSettings{1, repeat, {}});
  (void)sink;
  command_err() << name << ": median " << t.median_s << " s wall, " << t.median_cpu_s << " s CPU over "
                << repeat << " runs\n";
  return {{"name", name}, {"median_s", t.median_s}, {"median_cpu_s", t.median_cpu_s}, {"runs_s", t.runs_s}};
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<BenchStatsOptions>();
  app.add_option("--input,-i", opt->input,
                 "JSON with \"x\" (bootstrap data), \"diffs\" (permutation data) and \"resamples\"")
      ->required();
  app.add_option("--repeat", opt->repeat, "timed runs per case (after one warm-up)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", opt->threads, "worker threads (0 = all cores)");
  app.add_flag("--json", opt->json, "accepted for symmetry: the output is always one JSON document");
  return [opt] {
    const JsonInput in = JsonInput::read(opt->input);
    in.only_fields({"x", "diffs", "resamples", "seed"});
    const std::vector<double> x = in.numbers("x");
    const std::vector<double> diffs = in.numbers("diffs");
    const uint64_t resamples = in.unsigned_integer("resamples", 10000);
    if (resamples == 0) in.fail("\"resamples\" must be >= 1");
    const uint64_t seed = in.unsigned_integer("seed", 0);
    nlohmann::json results = nlohmann::json::array();
    for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99}) {
      for (auto method : {IntervalMethod::percentile, IntervalMethod::bca}) {
        BootstrapOptions bo;
        bo.statistic = stat;
        bo.method = method;
        bo.resamples = resamples;
        bo.seed = seed;
        bo.threads = opt->threads;
        auto r = time_case("bootstrap_" + to_string(stat) + "_" + to_string(method), opt->repeat,
                           [&] { return bootstrap_interval(x, bo).low; });
        r["n"] = x.size();
        r["resamples"] = resamples;
        results.push_back(r);
      }
    }
    SignFlipOptions so;
    so.method = PermutationMethod::exact;
    auto r = time_case("permutation_exact", opt->repeat, [&] { return sign_flip_test(diffs, so).p_value; });
    r["n"] = diffs.size();
    r["sign_vectors"] = uint64_t(1) << diffs.size();
    results.push_back(r);
    command_out()
        << nlohmann::json{{"threads", opt->threads}, {"repeat", opt->repeat}, {"results", results}}.dump(2)
        << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"bench-stats", "time bootstrap and exact permutation on given data (JSON)", setup});

}  // namespace bench_stats_command
}  // namespace ncclbot::cli
