// Per-call samples from nccl-tests 2.19.1+ `-I 1` output: the -J JSON's *_per_iter objects (every
// timed iteration) become one sample each, in order; the text i_* columns become per-sample noise
// statistics. The JSON below is written by hand in the key order of nccl-tests' writer
// (src/util.cu: writeBenchmarkLinePreamble, writeBenchmarkLineBody, writePerIterReport, "%lf").
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/nccl_tests/ingest_output.hpp"
#include "support/nccl_tests_rows.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;
using namespace ncclbot::test;

namespace {

// all_reduce on 2 hosts x 1 rank: bus factor 2(2-1)/2 = 1.
//   1024 B: out-of-place times 10.5 9.75 10.25 11.5 (mean 10.5 -> algbw 1024/10.5e3 = 0.097524)
//           in-place 10 10 12 10 (mean 10.5)
//   4096 B: out-of-place 20 21 19 20 (mean 20 -> 0.2048), in-place 20.5 20.5 19.5 19.5 (mean 20)
//   average busbw (0.097524 * 2 + 0.2048 * 2) / 4 = 0.151162
std::string json_log(int skipped = 0, const std::string& process1_first = "10.000000") {
  const std::string k = std::to_string(skipped);
  return R"({"version":3,"start_time":"2026-03-01 10:00:00","args":["./build/all_reduce_perf","-b","1K","-e","4K","-f","4","-g","1","-n","4","-I","1","-J","r.json"],"env":["NCCL_ALGO=Ring","NCCL_PROTO=LL"],"nccl_version":22807,"config":{"nthreads":1,"ngpus":1,"minimum_bytes":1024,"maximum_bytes":4096,"step_factor":4,"warmup_iters":1,"iterations":4,"aggregated_iterations":1,"validation":1,"graph":0,"blocking_collectives":false,"per_iter_timing":true,"per_iter_skip":)" +
         k +
         R"(,"parallel_init":false,"devices":[{"rank":0,"group":0,"pid":11,"hostname":"a","device":0,"device_hex":"0000:18:00","device_info":"GPU"},{"rank":1,"group":0,"pid":12,"hostname":"b","device":0,"device_hex":"0000:18:00","device_info":"GPU"}]},"results":[
{"size":1024,"count":256,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":10.500000,"alg_bw":0.097524,"bus_bw":0.097524,"nwrong":0.000000},"out_of_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":9.750000,"max_us":11.500000,"avg_us":10.500000,"p50_us":10.500000,"p95_us":11.500000,"p99_us":11.500000,"stdev_us":0.637377,"cv_pct":6.070259,"times_us":[10.500000,9.750000,10.250000,11.500000],"per_process_max_times_us":[[10.500000,9.750000,10.250000,11.500000],[)" +
         process1_first +
         R"(,9.500000,10.250000,11.000000]]},"in_place":{"time":10.500000,"alg_bw":0.097524,"bus_bw":0.097524,"nwrong":0.000000},"in_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":10.000000,"max_us":12.000000,"avg_us":10.500000,"p50_us":10.000000,"p95_us":12.000000,"p99_us":12.000000,"stdev_us":0.866025,"cv_pct":8.247861,"times_us":[10.000000,10.000000,12.000000,10.000000],"per_process_max_times_us":[[10.000000,10.000000,12.000000,10.000000],[9.000000,9.000000,9.000000,9.000000]]},"actual_iterations":4,"experiment_name":""},
{"size":4096,"count":1024,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":20.000000,"alg_bw":0.204800,"bus_bw":0.204800,"nwrong":0.000000},"out_of_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":19.000000,"max_us":21.000000,"avg_us":20.000000,"p50_us":20.000000,"p95_us":21.000000,"p99_us":21.000000,"stdev_us":0.707107,"cv_pct":3.535534,"times_us":[20.000000,21.000000,19.000000,20.000000],"per_process_max_times_us":[[20.000000,21.000000,19.000000,20.000000],[19.000000,19.000000,19.000000,19.000000]]},"in_place":{"time":20.000000,"alg_bw":0.204800,"bus_bw":0.204800,"nwrong":0.000000},"in_place_per_iter":{"skipped_iterations":)" + k + R"(,"min_us":19.500000,"max_us":20.500000,"avg_us":20.000000,"p50_us":20.500000,"p95_us":20.500000,"p99_us":20.500000,"stdev_us":0.500000,"cv_pct":2.500000,"times_us":[20.500000,20.500000,19.500000,19.500000],"per_process_max_times_us":[[20.500000,20.500000,19.500000,19.500000],[19.000000,19.000000,19.000000,19.000000]]},"actual_iterations":4,"experiment_name":""}],"out_of_bounds":{"count":0,"okay":true},"average_bus_bandwidth":{"bandwidth":0.151162,"okay":"unchecked"},"errors":[],"end_time":"2026-03-01 10:00:02"})";
}

IngestResult ingest(const std::string& text, IngestOptions o = {}) {
  return ingest_parsed({parse_log(text, "r.json")}, nullptr, o);
}

std::vector<float> samples_of(const Sweep& s, uint64_t bytes) {
  const int slot = arm_slot(Algo::kRing, Proto::kLL);
  const SweepView v = s.view();
  for (int c = 0; c < s.num_contexts(); ++c)
    if (s.context(c).bytes == bytes) {
      std::vector<float> out;
      for (int r = 0; r < v.samples; ++r) out.push_back(v.sample(c, slot, r));
      return out;
    }
  return {};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IngestPerIteration, EveryTimedIterationIsOneSampleInOrder) {
  const IngestResult r = ingest(json_log());
  EXPECT_EQ(r.samples, SampleKind::kIterations);
  EXPECT_EQ(r.sweep.samples(), 4);
  EXPECT_EQ(samples_of(r.sweep, 1024), (std::vector<float>{10.5f, 9.75f, 10.25f, 11.5f}));
  EXPECT_EQ(samples_of(r.sweep, 4096), (std::vector<float>{20.0f, 21.0f, 19.0f, 20.0f}));
  EXPECT_TRUE(r.noise.empty());
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].text();
}

TEST(IngestPerIteration, PlacementPicksTheIterationsOfOneOrBoth) {
  IngestOptions in;
  in.placement = Placement::kInPlace;
  EXPECT_EQ(samples_of(ingest(json_log(), in).sweep, 1024), (std::vector<float>{10.0f, 10.0f, 12.0f, 10.0f}));
  IngestOptions both;
  both.placement = Placement::kBoth;
  EXPECT_EQ(samples_of(ingest(json_log(), both).sweep, 4096),
            (std::vector<float>{20.0f, 21.0f, 19.0f, 20.0f, 20.5f, 20.5f, 19.5f, 19.5f}));
}

TEST(IngestPerIteration, MeanKeepsOneAveragedSamplePerRunWithItsSpread) {
  IngestOptions mean;
  mean.samples = SampleKind::kMean;
  const IngestResult r = ingest(json_log(), mean);
  EXPECT_EQ(r.samples, SampleKind::kMean);
  EXPECT_EQ(samples_of(r.sweep, 1024), (std::vector<float>{10.5f}));
  ASSERT_EQ(r.noise.size(), 2u);  // one per size: the JSON's min/max/p99/cv of the out-of-place times
  EXPECT_DOUBLE_EQ(r.noise[0].summary.max_us.value, 11.5);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.cv_pct.value, 6.070259);
}

TEST(IngestPerIteration, SkippedIterationsAreLeftOut) {
  // -K 1: nccl-tests keeps every time in times_us but leaves the first out of its statistics.
  const IngestResult r = ingest(json_log(1));
  EXPECT_EQ(samples_of(r.sweep, 1024), (std::vector<float>{9.75f, 10.25f, 11.5f}));
}

TEST(IngestPerIteration, TimesThatAreNotTheSlowestProcessAreFlagged) {
  // Process 1 at 10.6 us for iteration 0, above times_us[0] = 10.5: times_us is not the maximum.
  const ParsedLog log = parse_log(json_log(0, "10.600000"), "r.json");
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].message.find("results[0].out_of_place_per_iter.times_us[0]"), std::string::npos)
      << log.warnings[0].message;
}

TEST(IngestPerIteration, BrokenPerIterationObjectsNameTheirKey) {
  std::string nan = json_log();
  nan.replace(nan.find("[10.500000,9.750000"), 10, "[\"nan\"");
  EXPECT_NE(error_of([&] {
              parse_log(nan, "r.json");
            }).find("r.json: results[0].out_of_place_per_iter.times_us[0]"),
            std::string::npos);
  std::string short_list = json_log();
  short_list.replace(short_list.find(",11.500000],\"per_process"), 10, "");
  EXPECT_NE(
      error_of([&] { parse_log(short_list, "r.json"); }).find("has 3 times, but config.iterations is 4"),
      std::string::npos);
  EXPECT_NE(
      error_of([&] { parse_log(json_log(4), "r.json"); }).find("skipped_iterations: must be at least 0"),
      std::string::npos);
}

TEST(IngestPerIteration, TextIterationColumnsBecomeNoiseStatistics) {
  const IngestResult r = ingest_parsed({parse_log(iteration_columns_log(), "i.txt")}, nullptr, {});
  EXPECT_EQ(r.samples, SampleKind::kMean);
  ASSERT_EQ(r.noise.size(), 1u);
  EXPECT_EQ(r.noise[0].context.bytes, 1048576u);
  EXPECT_EQ(r.noise[0].sample, 0);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.min_us.value, 45.10);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.max_us.value, 48.20);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.p99_us.value, 48.00);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.cv_pct.value, 1.50);
  EXPECT_EQ(
      noise_csv(r.noise),
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,i_min_us,i_max_us,i_p99_us,i_cv_pct\n"
      "unknown,AllReduce,1,8,1048576,Ring,LL,0,45.1,48.2,48,1.5\n");
  // i_min above i_max is not a row nccl-tests prints.
  std::string bad = iteration_columns_log();
  bad.replace(bad.find("45.10"), 5, "49.10");
  EXPECT_NE(error_of([&] { parse_log(bad, "i.txt"); }).find("out-of-place i_min is above i_max"),
            std::string::npos);
}

TEST(IngestPerIteration, OneKindOfSamplePerSweep) {
  std::string json = json_log();
  const std::string text = iteration_columns_log();
  const std::vector<ParsedLog> mixed = {parse_log(json, "r.json"), parse_log(text, "i.txt")};
  EXPECT_NE(error_of([&] {
              ingest_parsed(mixed, nullptr, {});
            }).find("i.txt:2: this run has no per-iteration times"),
            std::string::npos);
  IngestOptions iterations;
  iterations.samples = SampleKind::kIterations;
  EXPECT_NE(error_of([&] {
              ingest_parsed({parse_log(text, "i.txt")}, nullptr, iterations);
            }).find("--samples iterations: this run has no per-iteration times"),
            std::string::npos);
  EXPECT_EQ(parse_sample_kind("mean"), SampleKind::kMean);
  EXPECT_THROW(parse_sample_kind("median"), UsageError);
}

TEST(IngestPerIteration, SweepFileSaysWhatItsSamplesAre) {
  EXPECT_EQ(sample_kind_comment(SampleKind::kIterations).rfind("# samples: iterations", 0), 0u);
  EXPECT_EQ(sample_kind_comment(SampleKind::kMean).rfind("# samples: mean", 0), 0u);
  EXPECT_EQ(noise_sidecar_path("out/sweep.csv"), "out/sweep.noise.csv");
}
