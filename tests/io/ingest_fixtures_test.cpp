// The project's own nccl-tests fixtures (tests/data/nccl-tests, described in its README.md), one per
// format quirk of the third-party logs, parsed and ingested (or rejected). They keep every quirk
// covered when the third-party folder is absent. Expected values were read by hand from the fixture
// text; each assertion names the fixture line it comes from. Each test fails if its quirk is
// mishandled: unstripped prefixes or an assumed 13-column layout turn rows into errors, a
// deviation read as a count of wrong elements adds a warning, a lost cut row or interleaving
// changes the row count or the error.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "support/ingest_checks.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;
using ncclbot::test::error_of;
using ncclbot::test::has_warning;

namespace {

const std::string kSrun = "srun_prefixed.txt";
const std::string kTimestampFixture = "timestamp_prefixed.txt";
const std::string kOldLayout = "old_layout.txt";
const std::string kCutMidRow = "truncated_mid_row.txt";
const std::string kCutBeforeSummary = "truncated_before_summary.txt";
const std::string kInterleavedHeaders = "interleaved_headers.txt";
const std::string kInterleavedRanks = "interleaved_ranks.txt";
const std::string kInterleavedRows = "interleaved_rows.txt";
const std::string kAborted = "failed_run_aborted.txt";
const std::string kWrongResults = "failed_run_wrong_results.txt";

std::string fixture(const std::string& name) {
  const std::string p = std::string(NCCLBOT_TEST_DATA_DIR) + "/nccl-tests/" + name;
  EXPECT_TRUE(std::filesystem::exists(p)) << "missing fixture " << p;
  return p;
}

int context_of(const Sweep& s, uint64_t bytes) {
  for (int c = 0; c < s.num_contexts(); ++c)
    if (s.context(c).bytes == bytes) return c;
  return -1;
}

// A manifest naming fixture `name` by its bare file name, matched by base name.
Manifest manifest_for(const std::string& name, const std::string& keys) {
  return parse_manifest("[[run]]\nfile = \"" + name + "\"\n" + keys,
                        ncclbot::test::temp_dir() + "/runs.toml");
}

}  // namespace

TEST(IngestFixtures, EveryFixtureIsCovered) {
  const std::set<std::string> covered = {kSrun,
                                         kTimestampFixture,
                                         kOldLayout,
                                         kCutMidRow,
                                         kCutBeforeSummary,
                                         kInterleavedHeaders,
                                         kInterleavedRanks,
                                         kInterleavedRows,
                                         kAborted,
                                         kWrongResults,
                                         "README.md"};
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(fixture(""))) {
    ++files;
    EXPECT_TRUE(covered.count(e.path().filename().string())) << "no test for " << e.path();
  }
  EXPECT_EQ(files, 11);
}

TEST(IngestFixtures, SrunTaskPrefixesAreStripped) {
  const ParsedLog log = read_log(fixture(kSrun));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_EQ(run.test_name, "all_reduce_perf");  // line 5: "+ srun -l ... ./build/all_reduce_perf ..."
  EXPECT_EQ(run.test_name_line, 5);
  EXPECT_EQ(run.first_line, 10);  // line 10: "0: # nThread 1 nGpus 1 ..."
  // Lines 1-4: the shell trace exports NCCL_ALGO and NCCL_PROTO; the later of each pair wins.
  ASSERT_TRUE(run.algo && run.proto);
  EXPECT_EQ(run.algo->value, "Ring");  // line 2: "+ NCCL_ALGO=Ring"
  EXPECT_EQ(run.algo->line, 2);
  EXPECT_EQ(run.algo->how, "shell/launcher line");
  EXPECT_EQ(run.proto->value, "Simple");  // line 4: "+ NCCL_PROTO=Simple"
  EXPECT_EQ(run.proto->line, 4);
  EXPECT_EQ(run.header_line, 19);  // line 19: "0: #       size         count ..."
  ASSERT_EQ(run.rows.size(), 6u);  // lines 21-26, 1 MiB .. 32 MiB
  // line 21: "0:      1048576  262144  float  sum  -1  96.40  10.88  16.32  0  95.85  10.94  16.41  0"
  EXPECT_EQ(run.rows[0].line, 21);
  EXPECT_EQ(run.rows[0].bytes, 1048576u);
  EXPECT_EQ(run.rows[0].count, 262144u);
  EXPECT_EQ(run.rows[0].type, "float");
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 96.40);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.busbw.value, 16.32);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 95.85);
  // line 26: "0:     33554432  8388608  float  sum  -1  1338.6  25.07  37.60  0  1331.2  25.21  37.81  0"
  EXPECT_EQ(run.rows[5].line, 26);
  EXPECT_EQ(run.rows[5].bytes, 33554432u);
  EXPECT_DOUBLE_EQ(run.rows[5].out_of_place.time_us.value, 1338.6);
  EXPECT_DOUBLE_EQ(run.rows[5].out_of_place.time_us.half_step, 0.05);  // one decimal printed
  EXPECT_DOUBLE_EQ(run.rows[5].in_place->time_us.value, 1331.2);
  EXPECT_EQ(run.trailer_line, 28);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 29.6983);  // line 28
  // Lines 13-16: ranks 0-1 on gpn-017, 2-3 on gpn-018.
  ASSERT_EQ(run.devices.size(), 4u);
  EXPECT_EQ(run.devices[2].host, "gpn-018");  // line 15
  const auto topo = topology_from_devices(run, log.file);
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 2);
  EXPECT_EQ(topo->gpus_per_node, 2);
  // The other tasks' lines (7-9: "1: cpu-bind=...", "2: ...", "3: ...") are neither rows nor noise.
  EXPECT_TRUE(log.warnings.empty()) << log.warnings[0].text();
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 4, log.file, w);  // 16.32 / 10.88 = 1.5 = 2 * 3 / 4
  EXPECT_TRUE(w.empty()) << w[0].text();

  // Forced in the log itself: ingested without a manifest.
  const IngestResult r = ingest_logs({fixture(kSrun)}, nullptr, {});
  EXPECT_EQ(r.sweep.num_contexts(), 6);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].used);
  EXPECT_EQ(r.runs[0].algo, "Ring");
  EXPECT_EQ(r.runs[0].proto, "Simple");
  EXPECT_EQ(r.runs[0].nodes, 2);
  EXPECT_EQ(r.runs[0].gpus_per_node, 2);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].text();
  const int c = context_of(r.sweep, 1048576);
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kRing, Proto::kSimple), 0), 96.40f);  // line 21
}

TEST(IngestFixtures, TimestampPrefixesAreStripped) {
  const ParsedLog log = read_log(fixture(kTimestampFixture));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  // Line 1 is ssh's "<stderr>:Warning: Permanently added ...": not part of any run.
  EXPECT_EQ(run.first_line, 2);                 // line 2: "...<stdout>:# nccl-tests version 2.17.1 ..."
  EXPECT_EQ(run.test_name, "all_reduce_perf");  // line 3: "# Collective test starting: all_reduce_perf"
  EXPECT_EQ(run.test_name_line, 3);
  // Lines 15-16: NCCL's own "NCCL_ALGO set by environment to Ring", "NCCL_PROTO ... to LL128".
  ASSERT_TRUE(run.algo && run.proto);
  EXPECT_EQ(run.algo->value, "Ring");
  EXPECT_EQ(run.algo->line, 15);
  EXPECT_EQ(run.algo->how, "NCCL_ALGO set by environment");
  EXPECT_EQ(run.proto->value, "LL128");
  EXPECT_EQ(run.proto->line, 16);
  EXPECT_EQ(run.header_line, 19);
  ASSERT_EQ(run.rows.size(), 5u);  // lines 21-25, 1 MiB .. 16 MiB
  // line 21: "...<stdout>:     1048576  262144  float  sum  -1  58.31  17.98  31.47  0  57.94  18.10  31.67
  // 0"
  EXPECT_EQ(run.rows[0].line, 21);
  EXPECT_EQ(run.rows[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 58.31);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 57.94);
  // line 25: "...<stdout>:    16777216  4194304  float  sum  -1  462.85  36.25  63.43  0  460.12 ..."
  EXPECT_EQ(run.rows[4].line, 25);
  EXPECT_EQ(run.rows[4].bytes, 16777216u);
  EXPECT_DOUBLE_EQ(run.rows[4].out_of_place.time_us.value, 462.85);
  EXPECT_DOUBLE_EQ(run.rows[4].in_place->time_us.value, 460.12);
  EXPECT_EQ(run.trailer_line, 27);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 49.283);  // line 27
  // Lines 7-14: ranks 0-3 on rdma-a07, 4-7 on rdma-a08.
  const auto topo = topology_from_devices(run, log.file);
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 2);
  EXPECT_EQ(topo->gpus_per_node, 4);
  EXPECT_TRUE(log.warnings.empty()) << log.warnings[0].text();
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 8, log.file, w);  // 31.47 / 17.98 = 1.75 = 2 * 7 / 8
  EXPECT_TRUE(w.empty()) << w[0].text();

  const IngestResult r = ingest_logs({fixture(kTimestampFixture)}, nullptr, {});
  EXPECT_EQ(r.sweep.num_contexts(), 5);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].used);
  EXPECT_EQ(r.runs[0].proto, "LL128");
  const int c = context_of(r.sweep, 16777216);
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kRing, Proto::kLL128), 0), 462.85f);  // line 25
}

TEST(IngestFixtures, OldLayoutWithoutRootAndWithDeviations) {
  const ParsedLog log = read_log(fixture(kOldLayout));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_EQ(run.test_name, "all_reduce_perf");  // line 1: "$ mpirun -np 4 ./build/all_reduce_perf ..."
  EXPECT_EQ(run.test_name_line, 1);
  // line 11: "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error"
  EXPECT_EQ(run.header_line, 11);
  EXPECT_TRUE(run.wrong_is_deviation);
  ASSERT_EQ(run.rows.size(), 6u);  // lines 14-19, 64 KiB .. 2 MiB; line 13 is an NCCL INFO line
  // line 14: "65536  16384  float  sum  38.52  1.70  2.55  0e+00  38.17  1.72  2.58  0e+00" (no root)
  EXPECT_EQ(run.rows[0].line, 14);
  EXPECT_EQ(run.rows[0].bytes, 65536u);
  EXPECT_EQ(run.rows[0].count, 16384u);
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_FALSE(run.rows[0].root.has_value());
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 38.52);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.algbw.value, 1.70);
  EXPECT_DOUBLE_EQ(*run.rows[0].out_of_place.wrong, 0.0);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 38.17);
  // line 15: "131072  32768  float  sum  45.08  2.91  4.36  2e-07  44.71  2.93  4.40  0e+00"
  EXPECT_DOUBLE_EQ(*run.rows[1].out_of_place.wrong, 2e-7);
  EXPECT_DOUBLE_EQ(*run.rows[1].in_place->wrong, 0.0);
  // line 19: "2097152  524288  float  sum  214.9  9.76  14.64  2e-07  213.1  9.84  14.76  1e-07"
  EXPECT_EQ(run.rows[5].line, 19);
  EXPECT_EQ(run.rows[5].bytes, 2097152u);
  EXPECT_DOUBLE_EQ(run.rows[5].out_of_place.time_us.value, 214.9);
  EXPECT_DOUBLE_EQ(run.rows[5].in_place->time_us.value, 213.1);
  EXPECT_DOUBLE_EQ(*run.rows[5].in_place->wrong, 1e-7);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 8.38333);  // line 21
  // Line 10 (the banner without its '#') and line 13 (NCCL INFO inside the table) are noise.
  EXPECT_TRUE(log.warnings.empty()) << log.warnings[0].text();
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 4, log.file, w);  // 2.55 / 1.70 = 1.5 = 2 * 3 / 4
  EXPECT_TRUE(w.empty()) << w[0].text();

  // Lines 5-8 list four ranks on dgx-a03 in the old form without "Group"; the manifest states it.
  const Manifest m = manifest_for(
      kOldLayout, "algo = \"Ring\"\nproto = \"LL\"\nnodes = 1\ngpus_per_node = 4\nfabric = \"a100\"\n");
  const IngestResult r = ingest_logs({fixture(kOldLayout)}, &m, {});
  EXPECT_EQ(r.sweep.num_contexts(), 6);
  // Deviations such as 2e-07 (lines 15-19) are rounding, not wrong elements.
  EXPECT_FALSE(has_warning(r.warnings, "wrong results"));
  const int c = context_of(r.sweep, 2097152);
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.context(c).nodes, 1);
  EXPECT_EQ(r.sweep.context(c).gpus_per_node, 4);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kRing, Proto::kLL), 0), 214.9f);  // line 19
}

TEST(IngestFixtures, RowCutMidLineIsDroppedWithAWarning) {
  const std::string text = ncclbot::test::read_all(fixture(kCutMidRow));
  // The cut is the file's end: line 22 has no newline (the fixture must keep it that way).
  ASSERT_FALSE(text.empty());
  ASSERT_NE(text.back(), '\n');
  const ParsedLog log = read_log(fixture(kCutMidRow));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  ASSERT_EQ(run.rows.size(), 4u);  // lines 18-21; line 22 "16777216  4194304  float  sum  -1  139" is cut
  // line 21: "8388608  2097152  float  sum  -1  86.34  97.16  170.03  0  85.71  97.87  171.28  0"
  EXPECT_EQ(run.rows[3].line, 21);
  EXPECT_EQ(run.rows[3].bytes, 8388608u);
  EXPECT_DOUBLE_EQ(run.rows[3].out_of_place.time_us.value, 86.34);
  EXPECT_DOUBLE_EQ(run.rows[3].in_place->time_us.value, 85.71);
  EXPECT_EQ(run.trailer_line, 0);  // no "Avg bus bandwidth" line
  EXPECT_FALSE(run.avg_busbw.has_value());
  // Line 22 holds 6 of the 13 columns.
  EXPECT_TRUE(has_warning(log.warnings,
                          "last row is cut off (expected 13 columns as in the column header, found 6)", 22));
  EXPECT_TRUE(has_warning(log.warnings, "run ends without its trailer", 21));
  EXPECT_EQ(log.warnings.size(), 2u);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 8, log.file, w);  // lines 6-13: eight ranks on hgx-c12
  EXPECT_TRUE(w.empty()) << w[0].text();

  // Only the file's unterminated last line may be cut: the same row ended by a newline is an error.
  EXPECT_NE(error_of([&] {
              parse_log(text + "\n", "cut.txt");
            }).find("cut.txt:22: expected 13 columns as in the column header, found 6"),
            std::string::npos);

  // The complete rows are still data.
  const Manifest m = manifest_for(kCutMidRow, "algo = \"Ring\"\nproto = \"Simple\"\n");
  const IngestResult r = ingest_logs({fixture(kCutMidRow)}, &m, {});
  EXPECT_EQ(r.sweep.num_contexts(), 4);
  EXPECT_TRUE(has_warning(r.warnings, "last row is cut off", 22));
  EXPECT_EQ(context_of(r.sweep, 16777216), -1);  // the cut size is not in the sweep
}

TEST(IngestFixtures, LogCutBeforeItsSummaryKeepsItsRows) {
  const ParsedLog log = read_log(fixture(kCutBeforeSummary));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  ASSERT_EQ(run.rows.size(), 5u);  // lines 12-16, 4 MiB .. 64 MiB; the file ends after line 16
  // line 12: "4194304  1048576  float  sum  -1  161.3  26.00  26.00  0  159.8  26.25  26.25  0"
  EXPECT_EQ(run.rows[0].line, 12);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 161.3);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 159.8);
  // line 16: "67108864  16777216  float  sum  -1  1597.4  42.01  42.01  0  1589.0  42.23  42.23  0"
  EXPECT_EQ(run.rows[4].line, 16);
  EXPECT_EQ(run.rows[4].bytes, 67108864u);
  EXPECT_DOUBLE_EQ(run.rows[4].out_of_place.time_us.value, 1597.4);
  EXPECT_DOUBLE_EQ(run.rows[4].in_place->time_us.value, 1589.0);
  EXPECT_EQ(run.trailer_line, 0);
  EXPECT_FALSE(run.avg_busbw.has_value());
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_TRUE(has_warning(log.warnings, "run ends without its trailer", 16));
  // Lines 6-7: one rank on each of ib-node-05 and ib-node-06; busbw = algbw for 2 ranks.
  const auto topo = topology_from_devices(run, log.file);
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 2);
  EXPECT_EQ(topo->gpus_per_node, 1);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 2, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();

  const Manifest m = manifest_for(kCutBeforeSummary, "algo = \"Tree\"\nproto = \"Simple\"\n");
  IngestOptions in_place;
  in_place.placement = Placement::kInPlace;
  const IngestResult r = ingest_logs({fixture(kCutBeforeSummary)}, &m, in_place);
  EXPECT_EQ(r.sweep.num_contexts(), 5);
  const int c = context_of(r.sweep, 4194304);
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kTree, Proto::kSimple), 0), 159.8f);  // in-place, line 12
}

TEST(IngestFixtures, InterleavedRunsAreRejectedAtTheFirstSign) {
  // Line 6 repeats line 1's "# nccl-tests version" before any row.
  std::string err = error_of([] { read_log(fixture(kInterleavedHeaders)); });
  EXPECT_NE(
      err.find(kInterleavedHeaders +
               ":6: second 'nccl-tests version' line before any result (first at line 1): the output of "
               "two runs is interleaved"),
      std::string::npos)
      << err;
  // Line 10 lists rank 0 (on pod-3b) again after rank 3 (on pod-3a) at line 9.
  err = error_of([] { read_log(fixture(kInterleavedRanks)); });
  EXPECT_NE(err.find(kInterleavedRanks + ":10: rank 0 listed again (rank 3 at line 9): ranks restart"),
            std::string::npos)
      << err;
  // Lines 14 and 15 both print size 1048576.
  err = error_of([] { read_log(fixture(kInterleavedRows)); });
  EXPECT_NE(err.find(kInterleavedRows + ":15: size 1048576 printed again (line 14): two runs interleaved"),
            std::string::npos)
      << err;
  // Ingest refuses them whatever the manifest says.
  for (const std::string& name : {kInterleavedHeaders, kInterleavedRanks, kInterleavedRows}) {
    const Manifest m = manifest_for(name, "algo = \"Ring\"\nproto = \"Simple\"\n");
    EXPECT_NE(error_of([&] { ingest_logs({fixture(name)}, &m, {}); }).find("interleaved"), std::string::npos)
        << name;
  }
}

TEST(IngestFixtures, AbortedRunIsNotData) {
  const ParsedLog log = read_log(fixture(kAborted));
  ASSERT_EQ(log.runs.size(), 2u);
  const nccl_tests::Run& failed = log.runs[0];
  EXPECT_EQ(failed.test_name, "alltoall_perf");  // line 2
  EXPECT_EQ(failed.header_line, 16);
  ASSERT_TRUE(failed.failure);
  // line 18: "node-b03: Test NCCL failure common.cu:1134 'unhandled system error (run with ...) / '"
  EXPECT_EQ(failed.failure->line, 18);
  EXPECT_EQ(
      failed.failure->message.rfind("node-b03: Test NCCL failure common.cu:1134 'unhandled system error", 0),
      0u)
      << failed.failure->message;
  EXPECT_TRUE(failed.rows.empty());
  EXPECT_EQ(failed.trailer_line, 0);
  const nccl_tests::Run& next = log.runs[1];
  EXPECT_EQ(next.first_line, 22);                // line 22: the next "# nccl-tests version"
  EXPECT_EQ(next.test_name, "all_reduce_perf");  // line 23
  EXPECT_FALSE(next.failure);
  ASSERT_EQ(next.rows.size(), 4u);  // lines 39-42
  // line 39: "33554432  8388608  float  sum  -1  1012.6  33.14  57.99  0  1008.3  33.28  58.24  0"
  EXPECT_EQ(next.rows[0].line, 39);
  EXPECT_DOUBLE_EQ(next.rows[0].out_of_place.time_us.value, 1012.6);
  // line 42: "268435456  67108864  float  sum  -1  7241.9  37.07  64.87  0  7229.0  37.13  64.98  0"
  EXPECT_EQ(next.rows[3].bytes, 268435456u);
  EXPECT_DOUBLE_EQ(next.rows[3].out_of_place.time_us.value, 7241.9);
  EXPECT_DOUBLE_EQ(*next.avg_busbw, 62.1513);  // line 44
  // The failure detail lines 19-21 (" .. node-b03 pid 77120: Test failure ...") add nothing.
  EXPECT_TRUE(log.warnings.empty()) << log.warnings[0].text();

  std::string err = error_of([] { ingest_logs({fixture(kAborted)}, nullptr, {}); });
  EXPECT_NE(err.find(kAborted + ":18: alltoall_perf failed: node-b03: Test NCCL failure common.cu:1134"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--skip-failed"), std::string::npos) << err;
  // Skipping the failed run leaves the all_reduce, which forces no arm (it starts at line 22).
  IngestOptions skip;
  skip.skip_failed = true;
  err = error_of([&] { ingest_logs({fixture(kAborted)}, nullptr, skip); });
  EXPECT_NE(err.find(kAborted + ":22: all_reduce_perf: no forced arm"), std::string::npos) << err;
  // Labelled, the all_reduce becomes data and the alltoall stays out.
  const Manifest m = manifest_for(kAborted, "algo = \"Ring\"\nproto = \"Simple\"\n");
  const IngestResult r = ingest_logs({fixture(kAborted)}, &m, skip);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_FALSE(r.runs[0].used);
  EXPECT_EQ(r.runs[0].reason.rfind("alltoall_perf failed", 0), 0u) << r.runs[0].reason;
  EXPECT_TRUE(has_warning(r.warnings, "run skipped: alltoall_perf failed", 1));  // the run starts at line 1
  EXPECT_TRUE(r.runs[1].used);
  EXPECT_EQ(r.runs[1].rows, 4u);
  EXPECT_EQ(r.runs[1].nodes, 2);  // lines 27-34: ranks 0-3 on node-b03, 4-7 on node-b04
  EXPECT_EQ(r.runs[1].gpus_per_node, 4);
  EXPECT_EQ(r.sweep.num_contexts(), 4);
}

TEST(IngestFixtures, WrongResultsAreReportedAndTheTimesKept) {
  const ParsedLog log = read_log(fixture(kWrongResults));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  // line 1: "+ NCCL_ALGO=Tree NCCL_PROTO=LL128 ./build/all_reduce_perf -b 1M -e 8M -f 2 -g 8"
  ASSERT_TRUE(run.algo && run.proto);
  EXPECT_EQ(run.algo->value, "Tree");
  EXPECT_EQ(run.algo->line, 1);
  EXPECT_EQ(run.proto->value, "LL128");
  EXPECT_FALSE(run.wrong_is_deviation);  // line 17: "#wrong" counts elements
  ASSERT_EQ(run.rows.size(), 4u);        // lines 19-22
  // line 20: "2097152  524288  float  sum  -1  52.16  40.21  70.36  0  51.70  40.56  70.99  1536"
  EXPECT_EQ(run.rows[1].line, 20);
  EXPECT_DOUBLE_EQ(*run.rows[1].out_of_place.wrong, 0.0);
  EXPECT_DOUBLE_EQ(*run.rows[1].in_place->wrong, 1536.0);
  // line 21: "4194304  1048576  float  sum  -1  66.43  63.14  110.49  2048  65.98  63.57  111.25  4096"
  EXPECT_DOUBLE_EQ(*run.rows[2].out_of_place.wrong, 2048.0);
  EXPECT_DOUBLE_EQ(*run.rows[2].in_place->wrong, 4096.0);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 92.9313);  // line 24
  // line 23: "# Out of bounds values : 3 FAILED"
  EXPECT_TRUE(has_warning(log.warnings, "nccl-tests reports 3 out-of-bounds values (data check FAILED)", 23));

  const IngestResult r = ingest_logs({fixture(kWrongResults)}, nullptr, {});
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].used);
  // Rows at lines 20 and 21 report wrong elements; the first is named.
  EXPECT_TRUE(has_warning(r.warnings,
                          "2 rows report wrong results (#wrong > 0): Tree/LL128 produced incorrect data; its "
                          "times are kept",
                          20));
  EXPECT_EQ(r.sweep.num_contexts(), 4);
  const int c = context_of(r.sweep, 4194304);
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kTree, Proto::kLL128), 0), 66.43f);  // line 21
}
