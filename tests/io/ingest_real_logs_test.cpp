// Every third-party nccl-tests log in $NCCLBOT_SHARED_DIR/data/nccl-tests (a folder beside the clone
// by default, not part of the repository), parsed and ingested (or rejected) with the
// reason its README gives. Expected numbers were read by eye from the files; each assertion names
// the line it was read from. The logs are not copied into the project: each test skips, saying where
// it looked, when they are absent, and tests/io/ingest_fixtures_test.cpp covers the same quirks with
// the project's own fixtures.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "support/ingest_checks.hpp"
#include "support/run_cli.hpp"
#include "support/shared_logs.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;
using ncclbot::test::has_warning;

namespace {

std::string log_path(const std::string& name) {
  const std::string p = ncclbot::test::shared_logs_dir() + name;
  EXPECT_TRUE(std::filesystem::exists(p)) << "missing shared log " << p;
  return p;
}

// The InputError message of ingesting `files` (empty when it succeeds).
std::string ingest_error(const std::vector<std::string>& files, const Manifest* m = nullptr,
                         IngestOptions o = {}) {
  try {
    ingest_logs(files, m, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

int context_of(const Sweep& s, uint64_t bytes, const std::string& fabric) {
  for (int c = 0; c < s.num_contexts(); ++c)
    if (s.context(c).bytes == bytes && s.context(c).fabric == fabric) return c;
  return -1;
}

Manifest manifest_from(const std::string& toml) {
  const std::string dir = ncclbot::test::temp_dir();
  return parse_manifest(toml, dir + "/runs.toml");
}

const std::string kRing = "h100_1node_8gpu_allreduce_ring_forced_8B-8G.txt";
const std::string kNvlsSuspect = "h100_1node_8gpu_allreduce_nvls_enabled_LABEL_SUSPECT_8B-8G.txt";
const std::string kInterleavedRing = "h100_2x1node_8gpu_allreduce_ring_forced_1M-8G_INTERLEAVED_BAD.txt";
const std::string kInterleavedNvls = "h100_2x1node_8gpu_allreduce_nvls_auto_1M-8G_INTERLEAVED_BAD.txt";
const std::string kA3Mega = "h100_a3mega_2node_16gpu_allreduce_auto_8B-8G.txt";
const std::string k10Node = "h100_10node_80gpu_5collectives_auto_32M-16G.txt";
const std::string kFailed = "h100_2node_8gpu_alltoall_FAILED_sendrecv_degraded.txt";
const std::string kGh200 = "gh200_alps_2node_8gpu_allreduce_auto_8B-4G_srun_prefixed.txt";
const std::string kGb200 = "gb200_nvl72_1rack_2rack_20rack_allreduce_auto_README_excerpt_TRUNCATED.txt";
const std::string kTree232 = "h100_2node_2gpu_allreduce_tree_forced_2M-32M_issue232_TRUNCATED.txt";
const std::string kH20Old = "h20_2node_16gpu_allreduce_nvlstree_forced_OLD_FORMAT_issue1244_TRUNCATED.txt";
const std::string kTimestamp =
    "h100_5node_40gpu_allreduce_ring_forced_TIMESTAMP_PREFIX_issue1368_TRUNCATED.txt";

}  // namespace

TEST(IngestRealLogs, EveryFileInTheFolderIsCovered) {
  const std::set<std::string> covered = {kRing,   kNvlsSuspect, kInterleavedRing, kInterleavedNvls, kA3Mega,
                                         k10Node, kFailed,      kGh200,           kGb200,           kTree232,
                                         kH20Old, kTimestamp,   "README.md"};
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(std::vector<std::string>(covered.begin(), covered.end()));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(ncclbot::test::shared_logs_dir())) {
    ++files;
    EXPECT_TRUE(covered.count(e.path().filename().string())) << "no test for " << e.path();
  }
  EXPECT_EQ(files, 13);
}

TEST(IngestRealLogs, RingForced1x8) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRing);
  const ParsedLog log = read_log(log_path(kRing));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_EQ(run.test_name, "all_reduce_perf");  // line 2
  ASSERT_EQ(run.rows.size(), 31u);              // 8 B .. 8 GiB, factor 2
  // line 18: "8  2  float  sum  -1  34.98  0.00  0.00  0  34.52  0.00  0.00  0"
  EXPECT_EQ(run.rows[0].line, 18);
  EXPECT_EQ(run.rows[0].bytes, 8u);
  EXPECT_EQ(run.rows[0].count, 2u);
  EXPECT_EQ(run.rows[0].type, "float");
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 34.98);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 34.52);
  // line 48: "8589934592 2147483648 float sum -1 40838.9 210.34 368.09 0 40780.5 210.64 368.62 0"
  EXPECT_EQ(run.rows[30].bytes, 8589934592u);
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.time_us.value, 40838.9);
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.time_us.half_step, 0.05);
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.busbw.value, 368.09);
  EXPECT_DOUBLE_EQ(run.rows[30].in_place->algbw.value, 210.64);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 122.955);  // line 50
  EXPECT_EQ(run.trailer_line, 50);
  // lines 6-13: eight ranks on gpu-dp-2jvzl-pqq7p
  const auto topo = topology_from_devices(run, log.file);
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 1);
  EXPECT_EQ(topo->gpus_per_node, 8);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 8, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
  EXPECT_TRUE(log.warnings.empty());

  // The log never says NCCL_ALGO=RING (the README knows it from the job script): not data alone.
  const std::string err = ingest_error({log_path(kRing)});
  EXPECT_NE(err.find(kRing + ":1: all_reduce_perf: no forced arm"), std::string::npos) << err;

  const Manifest m = manifest_from("[[run]]\nfile = \"" + kRing +
                                   "\"\nalgo = \"RING\"\nproto = \"simple\"\nfabric = \"t\"\n");
  IngestOptions both;
  both.placement = Placement::kBoth;
  const IngestResult r = ingest_logs({log_path(kRing)}, &m, both);
  EXPECT_EQ(r.sweep.num_contexts(), 31);
  EXPECT_EQ(r.sweep.samples(), 2);
  EXPECT_EQ(r.csv_rows, 62u);
  const int c = context_of(r.sweep, 8, "t");
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.context(c).nodes, 1);
  EXPECT_EQ(r.sweep.context(c).gpus_per_node, 8);
  EXPECT_EQ(r.sweep.context(c).collective, Collective::kAllReduce);
  const int slot = arm_slot(Algo::kRing, Proto::kSimple);
  EXPECT_EQ(r.sweep.view().mask(c).bits, 1u << slot);
  EXPECT_EQ(r.sweep.view().sample(c, slot, 0), 34.98f);  // out-of-place, line 18
  EXPECT_EQ(r.sweep.view().sample(c, slot, 1), 34.52f);  // in-place, line 18
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].used);
}

TEST(IngestRealLogs, ManifestContradictingTheLogIsAnError) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRing);
  // Device list (lines 6-13) says 1 node x 8 GPUs; line 2 says all_reduce_perf.
  const Manifest shape =
      manifest_from("[[run]]\nfile = \"" + kRing +
                    "\"\nalgo = \"Ring\"\nproto = \"Simple\"\nnodes = 2\ngpus_per_node = 8\n");
  std::string err = ingest_error({log_path(kRing)}, &shape);
  EXPECT_NE(err.find("runs.toml:1: nodes = 2, gpus_per_node = 8 contradicts the device list at"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(kRing + ":6: 1 host(s) x 8 rank(s)"), std::string::npos) << err;

  const Manifest coll = manifest_from(
      "[[run]]\nfile = \"" + kRing + "\"\nalgo = \"Ring\"\nproto = \"Simple\"\ncollective = \"allgather\"\n");
  err = ingest_error({log_path(kRing)}, &coll);
  EXPECT_NE(err.find("collective = AllGather contradicts the log: all_reduce_perf at"), std::string::npos)
      << err;
  EXPECT_NE(err.find(kRing + ":2"), std::string::npos) << err;
}

TEST(IngestRealLogs, NvlsLabelSuspectIsAnAutoRun) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kNvlsSuspect);
  const ParsedLog log = read_log(log_path(kNvlsSuspect));
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 31u);
  // line 18: "8 2 float sum -1 35.58 0.00 0.00 0 34.90 ..."; line 48: "... 40772.4 210.68 368.69 ..."
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.time_us.value, 35.58);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[30].out_of_place.time_us.value, 40772.4);
  EXPECT_DOUBLE_EQ(*log.runs[0].avg_busbw, 123.961);  // line 50
  // Same peak as the Ring run (368.69 vs 368.09): nothing in the log says NVLS ran.
  const std::string err = ingest_error({log_path(kNvlsSuspect)});
  EXPECT_NE(err.find("no forced arm"), std::string::npos) << err;
}

TEST(IngestRealLogs, InterleavedRunsAreRejectedWithBothLines) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kInterleavedRing, kInterleavedNvls);
  for (const std::string& name : {kInterleavedRing, kInterleavedNvls}) {
    std::string err;
    try {
      read_log(log_path(name));
    } catch (const InputError& e) {
      err = e.what();
    }
    // Line 6 repeats line 1's "# nccl-tests version" before any result.
    EXPECT_NE(err.find(name +
                       ":6: second 'nccl-tests version' line before any result (first at line 1): the output "
                       "of two runs is interleaved"),
              std::string::npos)
        << err;
  }
}

TEST(IngestRealLogs, InterleavedDefectIsCaughtBySeveralIndependentSigns) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kInterleavedRing);
  // Remove the duplicated header lines 6-10: the rank restart (line 19 lists rank 0 again after
  // rank 7 at line 18 of the original) must still be caught.
  std::ifstream in(log_path(kInterleavedRing));
  std::string text, line;
  for (int no = 1; std::getline(in, line); ++no)
    if (no < 6 || no > 10) text += line + "\n";
  try {
    parse_log(text, "cut.txt");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 listed again"), std::string::npos) << e.what();
  }
  // Keep one column header (line 33) and the rows: every size twice (lines 35 and 36: 1048576).
  std::ifstream in2(log_path(kInterleavedRing));
  std::string rows;
  for (int no = 1; std::getline(in2, line); ++no)
    if (no >= 31) rows += line + "\n";
  try {
    parse_log(rows, "rows.txt");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rows.txt:6: size 1048576 printed again (line 5)"),
              std::string::npos)
        << e.what();
  }
}

TEST(IngestRealLogs, A3MegaMpiSixteenRanks) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kA3Mega);
  const ParsedLog log = read_log(log_path(kA3Mega));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  // Line 7: "/opt/src/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1" (no starting line)
  EXPECT_EQ(run.test_name, "all_reduce_perf");
  EXPECT_EQ(run.test_name_line, 7);
  ASSERT_EQ(run.rows.size(), 31u);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 135.8);     // line 32
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.time_us.value, 47535);    // line 62
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.time_us.half_step, 0.5);  // printed without decimals
  EXPECT_DOUBLE_EQ(run.rows[30].out_of_place.busbw.value, 338.82);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 70.742);                // line 64
  const auto topo = topology_from_devices(run, log.file);  // lines 12-27: ztan-mig-235z x8, ztan-mig-gq73 x8
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 2);
  EXPECT_EQ(topo->gpus_per_node, 8);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 16, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
  // The README says auto: rejected, or skipped on request (then nothing is left: still an error).
  EXPECT_NE(ingest_error({log_path(kA3Mega)}).find(kA3Mega + ":9: all_reduce_perf: no forced arm"),
            std::string::npos);
  IngestOptions skip;
  skip.skip_unforced = true;
  EXPECT_NE(ingest_error({log_path(kA3Mega)}, nullptr, skip).find("every run was skipped"),
            std::string::npos);
}

TEST(IngestRealLogs, TenNodesFiveCollectives) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(k10Node);
  const ParsedLog log = read_log(log_path(k10Node));
  ASSERT_EQ(log.runs.size(), 5u);
  const std::vector<std::string> tests = {"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
                                          "alltoall_perf", "sendrecv_perf"};
  const std::vector<Collective> colls = {Collective::kAllReduce, Collective::kAllGather,
                                         Collective::kReduceScatter, Collective::kAllToAll,
                                         Collective::kSendRecv};
  // Trailer averages, lines 103, 210, 317, 424, 531.
  const std::vector<double> avg = {265.631, 218.677, 216.683, 47.1472, 15.1671};
  for (size_t i = 0; i < 5; ++i) {
    const nccl_tests::Run& run = log.runs[i];
    EXPECT_EQ(run.test_name, tests[i]);
    EXPECT_EQ(collective_of_test(run.test_name), colls[i]);
    EXPECT_EQ(run.rows.size(), 10u);  // 32 MiB .. 16 GiB after "Reducing maxBytes"
    EXPECT_DOUBLE_EQ(*run.avg_busbw, avg[i]);
    const auto topo = topology_from_devices(run, log.file);  // 80 ranks on 10 hosts
    ASSERT_TRUE(topo);
    EXPECT_EQ(topo->nodes, 10);
    EXPECT_EQ(topo->gpus_per_node, 8);
    std::vector<Diagnostic> w;
    check_bandwidths(run, colls[i], 80, log.file, w);
    EXPECT_TRUE(w.empty()) << tests[i] << ": " << w[0].text();
  }
  // line 92: all_reduce "33554432 4194304 double sum -1 798.52 42.02 82.99 0 857.09 ..."
  EXPECT_EQ(log.runs[0].rows[0].line, 92);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.time_us.value, 798.52);
  EXPECT_EQ(log.runs[0].rows[0].type, "double");
  // line 199: all_gather size is the full 80-rank buffer, count per rank: 52428 x 8 B x 80 = 33553920
  EXPECT_EQ(log.runs[1].rows[0].bytes, 33553920u);
  EXPECT_EQ(log.runs[1].rows[0].count, 52428u);
  EXPECT_EQ(log.runs[1].rows[0].redop, "none");
  // line 422: alltoall in-place #wrong is N/A, out-of-place 0; time 336737
  EXPECT_FALSE(log.runs[3].rows[9].in_place->wrong.has_value());
  EXPECT_EQ(*log.runs[3].rows[9].out_of_place.wrong, 0.0);
  EXPECT_DOUBLE_EQ(log.runs[3].rows[9].out_of_place.time_us.value, 336737);
  // line 529: sendrecv 16 GiB, 1128428 us
  EXPECT_DOUBLE_EQ(log.runs[4].rows[9].out_of_place.time_us.value, 1128428);
  // The same alltoall rows checked with the all_reduce factor must be flagged.
  std::vector<Diagnostic> wrong;
  check_bandwidths(log.runs[3], Collective::kAllReduce, 80, log.file, wrong);
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0].line, 413);
  const std::string err = ingest_error({log_path(k10Node)});
  EXPECT_NE(err.find(k10Node + ":1: all_reduce_perf: no forced arm"), std::string::npos) << err;
}

TEST(IngestRealLogs, FailedAlltoallThenDegradedSendrecv) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kFailed);
  const ParsedLog log = read_log(log_path(kFailed));
  ASSERT_EQ(log.runs.size(), 2u);
  const nccl_tests::Run& failed = log.runs[0];
  EXPECT_EQ(failed.test_name, "alltoall_perf");
  ASSERT_TRUE(failed.failure);
  EXPECT_EQ(failed.failure->line,
            18);  // "cnode2-001: Test NCCL failure common.cu:401 'remote process exited ..."
  EXPECT_NE(failed.failure->message.find("remote process exited or there was a network error"),
            std::string::npos);
  EXPECT_TRUE(failed.rows.empty());
  const nccl_tests::Run& sendrecv = log.runs[1];
  EXPECT_EQ(sendrecv.test_name, "sendrecv_perf");
  ASSERT_EQ(sendrecv.rows.size(), 10u);
  // line 51: "17179869184 2147483648 double sum -1 1.6e+07 1.09 1.09 0 1.7e+07 1.03 1.03 N/A"
  EXPECT_EQ(sendrecv.rows[9].line, 51);
  EXPECT_DOUBLE_EQ(sendrecv.rows[9].out_of_place.time_us.value, 1.6e7);
  EXPECT_DOUBLE_EQ(sendrecv.rows[9].out_of_place.time_us.half_step, 0.05e7);
  EXPECT_DOUBLE_EQ(sendrecv.rows[9].in_place->time_us.value, 1.7e7);
  // 17179869184 B / 1.6e7 us = 1.074 GB/s, printed 1.09: only the exponent's rounding explains it.
  std::vector<Diagnostic> w;
  check_bandwidths(sendrecv, Collective::kSendRecv, 8, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
  EXPECT_DOUBLE_EQ(*sendrecv.avg_busbw, 5.9895);  // line 53

  std::string err = ingest_error({log_path(kFailed)});
  EXPECT_NE(err.find(kFailed + ":18: alltoall_perf failed: cnode2-001: Test NCCL failure common.cu:401"),
            std::string::npos)
      << err;
  IngestOptions skip;
  skip.skip_failed = true;
  err = ingest_error({log_path(kFailed)}, nullptr, skip);
  EXPECT_NE(err.find(kFailed + ":25: sendrecv_perf: no forced arm"), std::string::npos) << err;
}

TEST(IngestRealLogs, Gh200SrunPrefixedWithShellTraceAndCounters) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kGh200);
  const ParsedLog log = read_log(log_path(kGh200));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_EQ(run.test_name, "all_reduce_perf");  // from the "+ srun ... all_reduce_perf" trace, line 35
  ASSERT_EQ(run.rows.size(), 30u);              // 8 B .. 4 GiB
  // line 74: "0:      1048576  262144  float  sum  -1  921.4  1.14  1.99  0  912.3 ..."
  EXPECT_EQ(run.rows[17].line, 74);
  EXPECT_EQ(run.rows[17].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(run.rows[17].out_of_place.time_us.value, 921.4);
  // line 75: the 2 MiB jump, 129.2 us
  EXPECT_DOUBLE_EQ(run.rows[18].out_of_place.time_us.value, 129.2);
  EXPECT_DOUBLE_EQ(*run.avg_busbw, 42.784);  // line 88
  // Devices, lines 45-52: nid005551 x4, nid005554 x4 (host printed right-aligned).
  const auto topo = topology_from_devices(run, log.file);
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->nodes, 2);
  EXPECT_EQ(topo->gpus_per_node, 4);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 8, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
  // The CXI counter table (lines 95-104) is not a results table and adds no warnings.
  EXPECT_TRUE(log.warnings.empty()) << log.warnings[0].text();
  EXPECT_NE(ingest_error({log_path(kGh200)}).find("no forced arm"), std::string::npos);
}

TEST(IngestRealLogs, Gb200ReadmeExcerptThreeBlocks) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kGb200);
  const ParsedLog log = read_log(log_path(kGb200));
  ASSERT_EQ(log.runs.size(), 3u);
  EXPECT_EQ(log.runs[0].rows.size(), 5u);                                    // lines 13-17
  EXPECT_EQ(log.runs[1].rows.size(), 6u);                                    // lines 30-35
  EXPECT_EQ(log.runs[2].rows.size(), 6u);                                    // lines 47-52
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.time_us.value, 1806.7);  // line 13
  EXPECT_DOUBLE_EQ(log.runs[2].rows[5].out_of_place.time_us.value, 84625);   // line 52
  EXPECT_DOUBLE_EQ(*log.runs[1].avg_busbw, 688.487);                         // line 37
  // Only the last device line survives (rank 71 / 143 / 1439): the shape is unknown.
  for (const nccl_tests::Run& run : log.runs) EXPECT_FALSE(topology_from_devices(run, log.file));
  EXPECT_EQ(log.runs[2].devices.back().rank, 1439);
  // 72, 144 and 1440 ranks (18, 36, 360 nodes of 4) fit busbw/algbw; 8 ranks would not.
  const int ranks[] = {72, 144, 1440};
  for (int i = 0; i < 3; ++i) {
    std::vector<Diagnostic> w;
    check_bandwidths(log.runs[size_t(i)], Collective::kAllReduce, ranks[i], log.file, w);
    EXPECT_TRUE(w.empty()) << w[0].text();
  }
  std::vector<Diagnostic> w;
  check_bandwidths(log.runs[2], Collective::kAllReduce, 8, log.file, w);
  ASSERT_EQ(w.size(), 1u);
  // line 47: 150.95 / 75.53 = 1.9985 = 2(n-1)/n for n ~ 1440
  EXPECT_EQ(w[0].line, 47);
  EXPECT_NE(w[0].message.find("should be 1.7500 for 8 ranks"), std::string::npos) << w[0].message;
  EXPECT_NE(ingest_error({log_path(kGb200)}).find(kGb200 + ":8: nccl-tests: no forced arm"),
            std::string::npos);
  // With a label, a manifest shape smaller than the listed rank 71 is caught.
  const Manifest m =
      manifest_from("[[run]]\nfile = \"" + kGb200 +
                    "\"\nalgo = \"NVLS\"\nproto = \"Simple\"\ncollective = \"allreduce\"\nnodes = "
                    "2\ngpus_per_node = 4\n");
  const std::string err = ingest_error({log_path(kGb200)}, &m);
  EXPECT_NE(
      err.find("nodes x gpus_per_node = 8 ranks, but the log lists rank 71 at " + log_path(kGb200) + ":8"),
      std::string::npos)
      << err;
}

TEST(IngestRealLogs, ForcedTreeIssue232Truncated) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kTree232);
  const ParsedLog log = read_log(log_path(kTree232));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_TRUE(run.test_name.empty());
  ASSERT_EQ(run.rows.size(), 5u);  // lines 5-9; line 10 is "    671088", cut off
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 113.2);  // line 5
  EXPECT_DOUBLE_EQ(run.rows[0].in_place->time_us.value, 93.35);
  EXPECT_DOUBLE_EQ(run.rows[4].out_of_place.time_us.value, 812.3);  // line 9
  EXPECT_TRUE(has_warning(log.warnings, "last row is cut off", 10));
  EXPECT_TRUE(has_warning(log.warnings, "without its trailer"));
  // n = 2: busbw = algbw (18.53 = 18.53 at line 5)
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 2, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();

  // Without collective and shape the run cannot be placed, even with its arm.
  Manifest arm_only =
      manifest_from("[[run]]\nfile = \"" + kTree232 + "\"\nalgo = \"Tree\"\nproto = \"Simple\"\n");
  EXPECT_NE(ingest_error({log_path(kTree232)}, &arm_only).find("collective unknown"), std::string::npos);
  Manifest no_shape = manifest_from("[[run]]\nfile = \"" + kTree232 +
                                    "\"\nalgo = \"Tree\"\nproto = \"Simple\"\ncollective = \"allreduce\"\n");
  EXPECT_NE(ingest_error({log_path(kTree232)}, &no_shape).find("nodes and GPUs per node unknown"),
            std::string::npos);
  Manifest proto_missing = manifest_from("[[run]]\nfile = \"" + kTree232 + "\"\nalgo = \"Tree\"\n");
  EXPECT_NE(ingest_error({log_path(kTree232)}, &proto_missing).find("NCCL_PROTO unknown"), std::string::npos);

  const Manifest m =
      manifest_from("[[run]]\nfile = \"" + kTree232 +
                    "\"\nalgo = \"Tree\"\nproto = \"Simple\"\ncollective = \"allreduce\"\nnodes = "
                    "2\ngpus_per_node = 1\nfabric = \"f232\"\n");
  IngestOptions in;
  in.placement = Placement::kInPlace;
  const IngestResult r = ingest_logs({log_path(kTree232)}, &m, in);
  EXPECT_EQ(r.sweep.num_contexts(), 5);
  const int c = context_of(r.sweep, 2097152, "f232");
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kTree, Proto::kSimple), 0), 93.35f);  // in-place, line 5
}

TEST(IngestRealLogs, OldFormatNvlsTreeIssue1244) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kH20Old);
  const ParsedLog log = read_log(log_path(kH20Old));
  ASSERT_EQ(log.runs.size(), 1u);
  const nccl_tests::Run& run = log.runs[0];
  EXPECT_TRUE(run.wrong_is_deviation);
  ASSERT_EQ(run.rows.size(), 8u);  // lines 4-11, line 12 "1024 256" cut off
  // line 4: "4  1  float  sum  47.54  0.00  0.00  0e+00  49.35  0.00  0.00  4e-07" (no root column)
  EXPECT_EQ(run.rows[0].bytes, 4u);
  EXPECT_FALSE(run.rows[0].root.has_value());
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us.value, 47.54);
  EXPECT_DOUBLE_EQ(*run.rows[0].out_of_place.wrong, 0.0);
  EXPECT_DOUBLE_EQ(*run.rows[0].in_place->wrong, 4e-7);
  EXPECT_DOUBLE_EQ(run.rows[7].in_place->time_us.value, 46.42);  // line 11
  EXPECT_TRUE(has_warning(log.warnings, "last row is cut off", 12));
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 16, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();

  const Manifest m =
      manifest_from("[[run]]\nfile = \"" + kH20Old +
                    "\"\nalgo = \"nvls_tree\"\nproto = \"Simple\"\ncollective = \"allreduce\"\nnodes = "
                    "2\ngpus_per_node = 8\nfabric = \"h20\"\n");
  const IngestResult r = ingest_logs({log_path(kH20Old)}, &m, {});
  EXPECT_EQ(r.sweep.num_contexts(), 8);
  const int c = context_of(r.sweep, 512, "h20");
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kNvlsTree, Proto::kSimple), 0), 46.58f);  // line 11
  // Float deviations (2e-07) are rounding, not wrong elements.
  EXPECT_FALSE(has_warning(r.warnings, "wrong results"));
}

TEST(IngestRealLogs, TimestampPrefixedRingIssue1368) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kTimestamp);
  const ParsedLog log = read_log(log_path(kTimestamp));
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 1u);
  // line 3: "Thu Jul 18 15:41:05 2024<stdout>:  1048576  262144  float  sum  -1  354.9  2.95  5.76  0  345.7
  // ..."
  EXPECT_EQ(log.runs[0].rows[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.time_us.value, 354.9);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].in_place->time_us.value, 345.7);
  EXPECT_TRUE(has_warning(log.warnings, "last row is cut off", 4));
  // 5.76 / 2.95 = 1.95 = 2 * 39 / 40
  std::vector<Diagnostic> w;
  check_bandwidths(log.runs[0], Collective::kAllReduce, 40, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
}

TEST(IngestRealLogs, ShippedManifestBuildsTheDemoSweep) {
  const Manifest m = read_manifest(std::string(NCCLBOT_SOURCE_DIR) + "/data/nccl-tests-forced.toml");
  std::vector<std::string> names;
  for (const auto& e : m.entries) names.push_back(e.file);
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(names);
  std::vector<std::string> logs;
  for (const auto& name : names) logs.push_back(log_path(name));
  const IngestResult r = ingest_logs(logs, &m, {});
  // 31 (Ring 1x8) + 5 (Tree 2x1) + 8 (NVLSTree 2x8) + 1 (Ring 5x8) sizes, one sample each.
  EXPECT_EQ(r.sweep.num_contexts(), 45);
  EXPECT_EQ(r.sweep.samples(), 1);
  EXPECT_EQ(r.runs.size(), 4u);
  const int c = context_of(r.sweep, 1048576, "h100-roce-issue1368");
  ASSERT_GE(c, 0);
  EXPECT_EQ(r.sweep.context(c).nodes, 5);
  EXPECT_EQ(r.sweep.view().sample(c, arm_slot(Algo::kRing, Proto::kSimple), 0), 354.9f);
}

TEST(IngestRealLogs, InterleavedRowsShowEightRanksNotSixteen) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kInterleavedRing);
  // Column header (line 33) and one copy of each size (lines 35, 37, ..., 61): the device list
  // reads as 16 ranks on 2 hosts, but busbw/algbw = 43.81 / 25.04 = 1.75 = 2 * 7 / 8.
  std::ifstream in(log_path(kInterleavedRing));
  std::string text, line;
  for (int no = 1; std::getline(in, line); ++no)
    if (no == 33 || (no >= 35 && no <= 62 && no % 2 == 1)) text += line + "\n";
  const ParsedLog log = parse_log(text, "one-copy.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 14u);
  std::vector<Diagnostic> w;
  check_bandwidths(log.runs[0], Collective::kAllReduce, 16, log.file, w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].message.find("which fits 8 ranks"), std::string::npos) << w[0].message;
  w.clear();
  check_bandwidths(log.runs[0], Collective::kAllReduce, 8, log.file, w);
  EXPECT_TRUE(w.empty()) << w[0].text();
}
