// Per-call samples from nccl-tests 2.19.1+ `-I 1` output: the -J JSON's *_per_iter objects (every
// timed iteration) become one sample each, in order; the text i_* columns become per-sample noise
// statistics. The JSON below is written by hand in the key order of nccl-tests' writer
// (nccl-tests src/util.cu: writeBenchmarkLinePreamble, writeBenchmarkLineBody, writePerIterReport, "%lf").
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

std::string error_message_of(const std::function<void()>& f) {
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
  const IngestResult r = ingest(per_iteration_json());
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
  EXPECT_EQ(samples_of(ingest(per_iteration_json(), in).sweep, 1024),
            (std::vector<float>{10.0f, 10.0f, 12.0f, 10.0f}));
  IngestOptions both;
  both.placement = Placement::kBoth;
  EXPECT_EQ(samples_of(ingest(per_iteration_json(), both).sweep, 4096),
            (std::vector<float>{20.0f, 21.0f, 19.0f, 20.0f, 20.5f, 20.5f, 19.5f, 19.5f}));
}

TEST(IngestPerIteration, MeanKeepsOneAveragedSamplePerRunWithItsSpread) {
  IngestOptions mean;
  mean.samples = SampleKind::kMean;
  const IngestResult r = ingest(per_iteration_json(), mean);
  EXPECT_EQ(r.samples, SampleKind::kMean);
  EXPECT_EQ(samples_of(r.sweep, 1024), (std::vector<float>{10.5f}));
  ASSERT_EQ(r.noise.size(), 2u);  // one per size: the JSON's min/max/p99/cv of the out-of-place times
  EXPECT_DOUBLE_EQ(r.noise[0].summary.max_us.value, 11.5);
  EXPECT_DOUBLE_EQ(r.noise[0].summary.cv_pct.value, 6.070259);
}

TEST(IngestPerIteration, SkippedIterationsAreLeftOut) {
  // -K 1: nccl-tests keeps every time in times_us but leaves the first out of its statistics.
  const IngestResult r = ingest(per_iteration_json(1));
  EXPECT_EQ(samples_of(r.sweep, 1024), (std::vector<float>{9.75f, 10.25f, 11.5f}));
}

TEST(IngestPerIteration, TimesThatAreNotTheSlowestProcessAreFlagged) {
  // Process 1 at 10.6 us for iteration 0, above times_us[0] = 10.5: times_us is not the maximum.
  const ParsedLog log = parse_log(per_iteration_json(0, "10.600000"), "r.json");
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].message.find("results[0].out_of_place_per_iter.times_us[0]"), std::string::npos)
      << log.warnings[0].message;
}

TEST(IngestPerIteration, BrokenPerIterationObjectsNameTheirKey) {
  std::string nan = per_iteration_json();
  nan.replace(nan.find("[10.500000,9.750000"), 10, "[\"nan\"");
  EXPECT_NE(error_message_of([&] {
              parse_log(nan, "r.json");
            }).find("r.json: results[0].out_of_place_per_iter.times_us[0]"),
            std::string::npos);
  std::string short_list = per_iteration_json();
  short_list.replace(short_list.find(",11.500000],\"per_process"), 10, "");
  EXPECT_NE(error_message_of([&] {
              parse_log(short_list, "r.json");
            }).find("has 3 times, but config.iterations is 4"),
            std::string::npos);
  EXPECT_NE(error_message_of([&] {
              parse_log(per_iteration_json(4), "r.json");
            }).find("skipped_iterations: must be at least 0"),
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
  EXPECT_NE(error_message_of([&] { parse_log(bad, "i.txt"); }).find("out-of-place i_min is above i_max"),
            std::string::npos);
}

TEST(IngestPerIteration, OneKindOfSamplePerSweep) {
  std::string json = per_iteration_json();
  const std::string text = iteration_columns_log();
  const std::vector<ParsedLog> mixed = {parse_log(json, "r.json"), parse_log(text, "i.txt")};
  EXPECT_NE(error_message_of([&] {
              ingest_parsed(mixed, nullptr, {});
            }).find("i.txt:2: this run has no per-iteration times"),
            std::string::npos);
  IngestOptions iterations;
  iterations.samples = SampleKind::kIterations;
  EXPECT_NE(error_message_of([&] {
              ingest_parsed({parse_log(text, "i.txt")}, nullptr, iterations);
            }).find("--samples iterations: this run has no per-iteration times"),
            std::string::npos);
  EXPECT_EQ(parse_sample_kind("mean"), SampleKind::kMean);
  EXPECT_THROW(parse_sample_kind("median"), UsageError);
}

TEST(IngestPerIteration, SweepFileSaysWhatItsSamplesAre) {
  EXPECT_EQ(sample_kind_word(SampleKind::kIterations), "iterations");
  EXPECT_EQ(sample_kind_word(SampleKind::kMean), "mean");
  EXPECT_EQ(noise_sidecar_path("out/sweep.csv"), "out/sweep.noise.csv");
}
