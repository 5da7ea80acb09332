#include "cli/bench_stats_call.hpp"

#include "ncclbot/bench/harness.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"

namespace ncclbot::cli {
namespace {

// One case through the benchmark harness: a warm-up run, then `repeat` timed runs.
template <class F>
BenchStatsCase time_case(const std::string& name, int repeat, size_t n, F&& work) {
  volatile double sink = 0;
  const BenchTiming t = measure([&] { sink = work(); }, BenchSettings{1, repeat, {}});
  (void)sink;
  BenchStatsCase c;
  c.name = name;
  c.median_s = t.median_s;
  c.median_cpu_s = t.median_cpu_s;
  c.runs_s = t.runs_s;
  c.n = n;
  return c;
}

}  // namespace

BenchStatsCallResult bench_stats_call(const BenchStatsCallOptions& o, const JsonInput& in) {
  if (o.repeat < 1 || o.repeat > 1000) throw UsageError("--repeat must be in [1, 1000]");
  in.only_fields({"x", "diffs", "resamples", "seed"});
  const std::vector<double> x = in.numbers("x");
  const std::vector<double> diffs = in.numbers("diffs");
  const uint64_t resamples = in.unsigned_integer("resamples", 10000);
  if (resamples == 0) in.fail("\"resamples\" must be >= 1");
  const uint64_t seed = in.unsigned_integer("seed", 0);
  BenchStatsCallResult r;
  r.threads = o.threads;
  r.repeat = o.repeat;
  for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99}) {
    for (auto method : {IntervalMethod::percentile, IntervalMethod::bca}) {
      BootstrapOptions bo;
      bo.statistic = stat;
      bo.method = method;
      bo.resamples = resamples;
      bo.seed = seed;
      bo.threads = o.threads;
      r.cases.push_back(time_case("bootstrap_" + to_string(stat) + "_" + to_string(method), o.repeat,
                                  x.size(), [&] { return bootstrap_interval(x, bo).low; }));
      r.cases.back().resamples = resamples;
    }
  }
  SignFlipOptions so;
  so.method = PermutationMethod::exact;
  r.cases.push_back(time_case("permutation_exact", o.repeat, diffs.size(),
                              [&] { return sign_flip_test(diffs, so).p_value; }));
  r.cases.back().sign_vectors = uint64_t(1) << diffs.size();
  return r;
}

nlohmann::json bench_stats_document(const BenchStatsCallResult& r) {
  nlohmann::json results = nlohmann::json::array();
  for (const BenchStatsCase& c : r.cases) {
    nlohmann::json j{{"name", c.name},
                     {"median_s", c.median_s},
                     {"median_cpu_s", c.median_cpu_s},
                     {"runs_s", c.runs_s},
                     {"n", c.n}};
    if (c.resamples) j["resamples"] = *c.resamples;
    if (c.sign_vectors) j["sign_vectors"] = *c.sign_vectors;
    results.push_back(j);
  }
  return {{"threads", r.threads}, {"repeat", r.repeat}, {"results", results}};
}

}  // namespace ncclbot::cli
