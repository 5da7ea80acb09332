// A run's knob point (channels, chunk size) through ingest: the manifest's `channels` and
// `chunk_bytes`, the channel limits the -J JSON's environment recorded, and the channels NCCL's INIT
// line says the communicator set up ("N coll channels, ...", NCCL src/init.cc; the real line
// quoted in NVIDIA/nccl #1189). Logs and manifests are written by hand.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "support/nccl_tests_rows.hpp"

namespace ncclbot::test {
namespace {

// A forced Ring/LL all_reduce on one host of 8 ranks, with NCCL INIT lines after the device list:
// ring and connection lines (whose "/N" is not the count) and each rank's coll-channels line.
// Line 1 export, 2 test start, 3 "# Using devices", 4-11 ranks, 12-13 ring/connection lines,
// 14 and 15 the coll-channels lines of ranks 0 and 1, 16 header, 17 the 1 MiB row.
std::string knob_text_log(int rank0_channels, int rank1_channels) {
  std::string s =
      "export NCCL_ALGO=Ring NCCL_PROTO=LL\n# Collective test starting: all_reduce_perf\n# Using devices\n";
  for (int r = 0; r < 8; ++r)
    s += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on hostA device  0 [0] GPU\n";
  s += "hostA:1:9 [0] NCCL INFO Channel 00/16 :    0   1   2   3   4   5   6   7\n";
  s += "hostA:1:9 [3] NCCL INFO Channel 04/0 : 3[3] -> 4[4] via P2P/CUMEM\n";
  for (int r = 0; r < 2; ++r)
    s += "hostA:1:9 [" + std::to_string(r) + "] NCCL INFO " +
         std::to_string(r == 0 ? rank0_channels : rank1_channels) +
         " coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer\n";
  return s + kHeader13 + kRow1M + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 39.475\n";
}

// per_iteration_json's run with its environment list replaced by `env` (JSON strings).
std::string json_with_env(const std::string& env) {
  std::string s = per_iteration_json();
  const std::string from = R"("env":["NCCL_ALGO=Ring","NCCL_PROTO=LL"])";
  return s.replace(s.find(from), from.size(), R"("env":["NCCL_ALGO=Ring","NCCL_PROTO=LL",)" + env + "]");
}

std::string ingest_error(const nccl_tests::ParsedLog& log, const std::string& manifest_text) {
  const nccl_tests::Manifest m = nccl_tests::parse_manifest(manifest_text, "/m/runs.toml");
  try {
    nccl_tests::ingest_parsed({log}, &m, nccl_tests::IngestOptions{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(IngestKnobPoint, NcclsCollChannelsLineIsReadAndConnectionLinesAreNot) {
  const nccl_tests::ParsedLog agree = nccl_tests::parse_log(knob_text_log(16, 16), "k.log");
  ASSERT_EQ(agree.runs.size(), 1u);
  ASSERT_TRUE(agree.runs[0].coll_channels);
  EXPECT_EQ(agree.runs[0].coll_channels->value, "16");
  EXPECT_EQ(agree.runs[0].coll_channels->line, 14);
  EXPECT_FALSE(agree.runs[0].coll_channels_disagree);
  EXPECT_TRUE(nccl_tests::parse_log(knob_text_log(16, 8), "k.log").runs[0].coll_channels_disagree);
  // Without NCCL INFO lines (as in every third-party nccl-tests log the tests read) nothing is known.
  EXPECT_FALSE(nccl_tests::parse_log(iteration_columns_log(), "plain.log").runs[0].coll_channels);
}

TEST(IngestKnobPoint, TheJsonEnvironmentsKnobVariablesAreRecorded) {
  const nccl_tests::ParsedLog log = nccl_tests::parse_log(
      json_with_env(R"("NCCL_MIN_CTAS=16","NCCL_MAX_CTAS=16","NCCLBOT_TABLE=/c/tables/chunk-4096.csv",)"
                    R"("NCCL_CHUNK_SIZE=1048576")"),
      "r.json");
  const nccl_tests::Run& run = log.runs.at(0);
  ASSERT_TRUE(run.min_ctas && run.max_ctas && run.tuner_table && run.chunk_size_env);
  EXPECT_EQ(run.min_ctas->value, "16");
  EXPECT_EQ(run.max_ctas->value, "16");
  EXPECT_EQ(run.tuner_table->value, "/c/tables/chunk-4096.csv");
  EXPECT_EQ(run.chunk_size_env->value, "1048576");
}

TEST(IngestKnobPoint, ManifestKnobValuesOutsideNcclsLimitsNameTheirLine) {
  const struct {
    std::string entry, expected;
  } cases[] = {
      {"channels = 65", "/m/runs.toml:3: channels must be in [0, 64]"},
      {"channels = -1", "/m/runs.toml:3: channels must be in [0, 64]"},
      {"chunk_bytes = -512", "/m/runs.toml:3: chunk_bytes must be in [0, 1073741824]"},
      {"chunk_bytes = 2147483648", "/m/runs.toml:3: chunk_bytes must be in [0, 1073741824]"},
  };
  for (const auto& c : cases) {
    try {
      nccl_tests::parse_manifest("[[run]]\nfile = \"r.json\"\n" + c.entry + "\n", "/m/runs.toml");
      ADD_FAILURE() << c.entry << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

// What the run says it forced, what NCCL says it set up and what the manifest says must agree, and
// a chunk must fit the run's protocol's grain: otherwise an error naming the place to fix.
TEST(IngestKnobPoint, AKnobPointTheLogContradictsIsAnErrorNamingBothPlaces) {
  const nccl_tests::ParsedLog forced16 =
      nccl_tests::parse_log(json_with_env(R"("NCCL_MIN_CTAS=16","NCCL_MAX_CTAS=16")"), "/m/r.json");
  EXPECT_NE(ingest_error(forced16, "[[run]]\nfile = \"r.json\"\nchannels = 8\n")
                .find("/m/runs.toml:3: channels = 8 contradicts the log's NCCL_MIN_CTAS = NCCL_MAX_CTAS = 16 "
                      "(JSON env)"),
            std::string::npos);
  const nccl_tests::ParsedLog nccl32 = nccl_tests::parse_log(knob_text_log(32, 32), "/m/k.log");
  EXPECT_NE(ingest_error(nccl32, "[[run]]\nfile = \"k.log\"\nchannels = 16\n")
                .find("/m/k.log:14: NCCL set up 32 coll channels, but the run forced 16"),
            std::string::npos);
  const nccl_tests::ParsedLog split = nccl_tests::parse_log(knob_text_log(16, 8), "/m/k.log");
  EXPECT_NE(ingest_error(split, "[[run]]\nfile = \"k.log\"\nchannels = 16\n")
                .find("/m/k.log:14: ranks report different coll channel counts"),
            std::string::npos);
  const nccl_tests::ParsedLog plain = nccl_tests::parse_log(per_iteration_json(), "/m/r.json");
  EXPECT_NE(ingest_error(plain, "[[run]]\nfile = \"r.json\"\nchunk_bytes = 1000\n")
                .find("/m/runs.toml:3: chunk_bytes = 1000 is not a multiple of LL's 16 B grain"),
            std::string::npos);
}

// The knob point reaches the sweep: a run that forced 16 channels and one at NCCL's own values, over
// the same sizes, are two arms of each context (never one arm's merged samples), and the sweep CSV
// carries the channels and chunk_bytes columns. Expected rows from the hand-written JSON: 1024 B,
// out-of-place iterations 10.5 9.75 10.25 11.5 (per_iteration_json).
TEST(IngestKnobPoint, AKnobPointBecomesItsOwnArmWithKnobColumns) {
  const nccl_tests::ParsedLog plain = nccl_tests::parse_log(per_iteration_json(), "/m/plain.json");
  const nccl_tests::ParsedLog forced16 =
      nccl_tests::parse_log(json_with_env(R"("NCCL_MIN_CTAS=16","NCCL_MAX_CTAS=16")"), "/m/r16.json");
  const nccl_tests::Manifest m = nccl_tests::parse_manifest(
      "[[run]]\nfile = \"plain.json\"\n[[run]]\nfile = \"r16.json\"\n", "/m/runs.toml");
  const nccl_tests::IngestResult r =
      nccl_tests::ingest_parsed({plain, forced16}, &m, nccl_tests::IngestOptions{});
  ASSERT_EQ(r.sweep.num_contexts(), 2);
  ASSERT_FALSE(r.sweep.slot_shaped());
  const std::span<const Arm> arms = r.sweep.arms(0);
  ASSERT_EQ(arms.size(), 2u);
  EXPECT_EQ(arms[0], (Arm{Algo::kRing, Proto::kLL, 0, 0}));
  EXPECT_EQ(arms[1], (Arm{Algo::kRing, Proto::kLL, 16, 0}));
  EXPECT_EQ(r.sweep.samples(), 4);
  EXPECT_EQ(r.sweep.arm_sample(0, 1, 1), 9.75f);
  EXPECT_EQ(r.runs.at(1).channels, 16);
  std::ostringstream csv;
  write_sweep_csv(r.sweep, csv);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us");
  EXPECT_NE(text.find("\nunknown,AllReduce,2,1,1024,Ring,LL,16,0,1,9.75\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nunknown,AllReduce,2,1,1024,Ring,LL,0,0,1,9.75\n"), std::string::npos) << text;
}

// A chunk size the manifest states (a campaign's [[run]] chunk_bytes) is the arm's.
TEST(IngestKnobPoint, TheManifestsChunkSizeIsTheArms) {
  const nccl_tests::ParsedLog plain = nccl_tests::parse_log(per_iteration_json(), "/m/r.json");
  const nccl_tests::Manifest m =
      nccl_tests::parse_manifest("[[run]]\nfile = \"r.json\"\nchunk_bytes = 4096\n", "/m/runs.toml");
  const nccl_tests::IngestResult r = nccl_tests::ingest_parsed({plain}, &m, nccl_tests::IngestOptions{});
  ASSERT_EQ(r.sweep.arms(0).size(), 1u);
  EXPECT_EQ(r.sweep.arms(0)[0], (Arm{Algo::kRing, Proto::kLL, 0, 4096}));
  EXPECT_EQ(r.runs.at(0).chunk_bytes, 4096u);
  // NCCL's own values stated explicitly: the plain algorithm x protocol sweep.
  const nccl_tests::Manifest own = nccl_tests::parse_manifest(
      "[[run]]\nfile = \"r.json\"\nchannels = 0\nchunk_bytes = 0\n", "/m/runs.toml");
  EXPECT_TRUE(nccl_tests::ingest_parsed({plain}, &own, nccl_tests::IngestOptions{}).sweep.slot_shaped());
}

}  // namespace
}  // namespace ncclbot::test
