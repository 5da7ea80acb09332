// `run_status` on hand-made campaign folders: a run is done only when its text log and -J JSON are
// complete and hold what was planned; otherwise missing or failed with the reason a person needs.
// The JSON is the hand-written -I 1 output of tests/support (Ring/LL all_reduce, 2 hosts x 1
// rank, 1 KiB and 4 KiB, 4 iterations).
#include <gtest/gtest.h>

#include <filesystem>

#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "support/nccl_tests_rows.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::campaign;
using namespace ncclbot::test;
namespace fs = std::filesystem;

namespace {

struct Planned {
  int iters = 4, nodes = 2;
  uint64_t max_bytes = 4096;
  std::string algo = "Ring";
  int channels = 0;  // the run's knob point (0: NCCL's own)
  uint64_t chunk_bytes = 0;
};

// The [campaign] lists and the [[run]] keys of a knob point.
std::string knob_lists(const Planned& p) {
  return (p.channels ? "channels = [0, " + std::to_string(p.channels) + "]\n" : "") +
         (p.chunk_bytes ? "chunk_bytes = [0, " + std::to_string(p.chunk_bytes) + "]\n" : "");
}
std::string knob_keys(const Planned& p) {
  return (p.channels ? "channels = " + std::to_string(p.channels) + "\n" : "") +
         (p.chunk_bytes ? "chunk_bytes = " + std::to_string(p.chunk_bytes) + "\n" : "");
}

std::string campaign_toml(const Planned& p) {
  return "[campaign]\nversion = 1\nfabric = \"h100-ib-a\"\ngpus_per_node = 1\nnodes = [" +
         std::to_string(p.nodes) +
         "]\ncollectives = [\"allreduce\"]\nmin_bytes = 1024\nmax_bytes = " + std::to_string(p.max_bytes) +
         "\nstep_factor = 4\niters = " + std::to_string(p.iters) + "\nwarmup = 1\nlauncher = \"srun\"\n" +
         knob_lists(p) +
         "\n[[run]]\nid = \"n2-allreduce-ring-ll\"\nfile = "
         "\"logs/r.json\"\nlog = "
         "\"logs/r.log\"\ncollective = \"allreduce\"\nalgo = \"" +
         p.algo + "\"\nproto = \"LL\"\nnodes = " + std::to_string(p.nodes) +
         "\ngpus_per_node = 1\nfabric = \"h100-ib-a\"\nmin_bytes = 1024\n" + knob_keys(p);
}

// The text side of the same run (times as in the JSON; status reads structure, not bandwidths).
const std::string kTextLog =
    "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n"
    "# Collective test starting: all_reduce_perf\n" +
    kHeader13 +
    "        1024           256     float     sum      -1    10.50    0.10    0.10       0    10.50    0.10  "
    "  "
    "0.10       0\n"
    "        4096          1024     float     sum      -1    20.00    0.20    0.20       0    20.00    0.20  "
    "  "
    "0.20       0\n"
    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.15\n#\n# Collective test concluded: "
    "all_reduce_perf\n";

struct Folder {
  std::string dir = temp_dir();
  Folder(const Planned& p, const std::string* text, const std::string* json) {
    fs::create_directories(dir + "/logs");
    write_file(dir + "/campaign.toml", campaign_toml(p));
    if (text) write_file(dir + "/logs/r.log", *text);
    if (json) write_file(dir + "/logs/r.json", *json);
  }
  RunStatus status() const {
    const Campaign c = read_campaign(dir);
    return run_status(c, c.runs.at(0));
  }
};

RunStatus status_of(const Planned& p, const std::string* text, const std::string* json) {
  return Folder(p, text, json).status();
}

}  // namespace

TEST(RunStatus, DoneWhenBothLogsHoldThePlannedRun) {
  const std::string json = per_iteration_json();
  const RunStatus s = status_of({}, &kTextLog, &json);
  EXPECT_EQ(s.state, RunState::kDone) << s.reason;
  EXPECT_EQ(status_of({}, nullptr, nullptr).state, RunState::kMissing);
}

TEST(RunStatus, EachWayARunFailsIsNamed) {
  const std::string json = per_iteration_json();
  const auto reason = [](const RunStatus& s) {
    return s.state == RunState::kFailed ? s.reason : "(not failed)";
  };
  EXPECT_NE(reason(status_of({}, &kTextLog, nullptr)).find("no -J JSON file"), std::string::npos);
  EXPECT_NE(reason(status_of({}, nullptr, &json)).find("text log"), std::string::npos);
  const std::string cut = json.substr(0, json.size() / 2);
  EXPECT_NE(reason(status_of({}, &kTextLog, &cut)).find("broken JSON"), std::string::npos);
  const std::string no_trailer = kTextLog.substr(0, kTextLog.find("# Out of bounds"));
  EXPECT_NE(reason(status_of({}, &no_trailer, &json)).find("ends before its trailer"), std::string::npos);
  const std::string failed = no_trailer + "host: Test NCCL failure common.cu:401 'unhandled system error'\n";
  EXPECT_NE(reason(status_of({}, &failed, &json)).find("nccl-tests failed at"), std::string::npos);
  std::string wrong = json;
  wrong.replace(wrong.find("\"nwrong\":0.000000"), 17, "\"nwrong\":3.000000");
  EXPECT_EQ(reason(status_of({}, &kTextLog, &wrong)), "wrong results (#wrong 3) at 1024 B");
  // A time a sweep cannot hold (a broken timer): ingest would refuse the run, so it is not done.
  std::string huge = json;
  for (size_t at = huge.find("[10.500000,9.750000"); at != std::string::npos;
       at = huge.find("[10.500000,9.750000"))
    huge.replace(at, 10, "[1e300");
  EXPECT_EQ(reason(status_of({}, &kTextLog, &huge)),
            "a time of 1e+300 us at 1024 B is outside what a sweep can hold (ingest would refuse it)");
  Planned more_iters;
  more_iters.iters = 5;
  EXPECT_EQ(reason(status_of(more_iters, &kTextLog, &json)), "4 timed iterations at 1024 B, planned 5");
  Planned more_sizes;
  more_sizes.max_bytes = 16384;
  EXPECT_EQ(reason(status_of(more_sizes, &kTextLog, &json)), "printed 2 sizes, planned 3 (1024..16384 B)");
  Planned tree;
  tree.algo = "Tree";
  EXPECT_EQ(reason(status_of(tree, &kTextLog, &json)), "ran NCCL_ALGO=Ring, planned Tree");
  Planned one_node;
  one_node.nodes = 1;
  EXPECT_EQ(reason(status_of(one_node, &kTextLog, &json)), "ran on 2 node(s) x 1 ranks, planned 1 x 1");
}

TEST(RunStatus, IngestAttachesTheCostModelsPrior) {
  const std::string json = per_iteration_json();
  const Folder f({}, &kTextLog, &json);
  const CampaignIngest in = ingest_campaign(read_campaign(f.dir), {}, false);
  const Sweep& s = in.result.sweep;
  ASSERT_EQ(s.num_contexts(), 2);
  ASSERT_TRUE(s.has_prior());
  const int slot = arm_slot(Algo::kRing, Proto::kLL);
  const model::Topology t = sim::topology_for(sim::load_fabric("h100-ib-a"), 2, 1);
  EXPECT_EQ(s.view().prior(0, slot),
            model::arm_time_us(t, Collective::kAllReduce, Algo::kRing, Proto::kLL, 1024));
  EXPECT_EQ(s.view().sample(1, slot, 3), 20.0f);  // the fourth timed iteration at 4 KiB
  EXPECT_EQ(s.context(0).fabric, "h100-ib-a");
}

// A knob point is checked against what the run recorded: the channel limits and decision table its
// JSON environment holds, the channels NCCL's INIT line says it set up, and no NCCL_CHUNK_SIZE.
TEST(RunStatus, AKnobPointIsDoneOnlyWhenTheRunRecordsIt) {
  const auto with_env = [](const std::string& env) {
    std::string j = per_iteration_json();
    const std::string from = R"("env":["NCCL_ALGO=Ring","NCCL_PROTO=LL"])";
    return j.replace(j.find(from), from.size(), R"("env":["NCCL_ALGO=Ring","NCCL_PROTO=LL")" + env + "]");
  };
  const auto reason = [](const RunStatus& s) {
    return s.state == RunState::kFailed ? s.reason : "(not failed)";
  };
  Planned ch16;
  ch16.channels = 16;
  const std::string forced16 = with_env(R"(,"NCCL_MIN_CTAS=16","NCCL_MAX_CTAS=16")");
  EXPECT_EQ(status_of(ch16, &kTextLog, &forced16).state, RunState::kDone)
      << status_of(ch16, &kTextLog, &forced16).reason;
  const std::string plain = per_iteration_json();
  EXPECT_EQ(reason(status_of(ch16, &kTextLog, &plain)), "ran with NCCL_MIN_CTAS=(unset), planned 16");
  EXPECT_EQ(reason(status_of({}, &kTextLog, &forced16)),
            "ran with NCCL_MIN_CTAS=16, planned NCCL's own channel count (unset)");
  // NCCL's INIT line on line 3 of the text log says 32 channels.
  std::string text32 = kTextLog;
  text32.insert(text32.find("#       size"),
                "node:1:2 [0] NCCL INFO 32 coll channels, 0 collnet channels, 0 nvls "
                "channels, 32 p2p channels, 2 p2p channels per peer\n");
  const Folder f32(ch16, &text32, &forced16);
  EXPECT_EQ(reason(f32.status()), "NCCL set up 32 coll channels (" + f32.dir + "/logs/r.log:3), planned 16");
  Planned chunk;
  chunk.chunk_bytes = 4096;
  std::string plain30 = plain;  // NCCL 2.30.3
  plain30.replace(plain30.find("\"nccl_version\":22807"), 20, "\"nccl_version\":23003");
  EXPECT_EQ(reason(status_of(chunk, &kTextLog, &plain30)),
            "ran with NCCLBOT_TABLE=(unset), planned tables/chunk-4096.csv");
  // The JSON's nccl_version is NCCL's library version code: 22807 is 2.28.7, older than tuner v6 (2.30.3).
  std::string tabled = with_env(R"(,"NCCLBOT_TABLE=/x/tables/chunk-4096.csv")");
  EXPECT_EQ(
      reason(status_of(chunk, &kTextLog, &tabled)),
      "a chunk size needs NCCL 2.30.3 or later (tuner v6 getChunkSize); NCCL 2.28.7 ran its own chunk size");
  tabled.replace(tabled.find("\"nccl_version\":22807"), 20, "\"nccl_version\":23003");
  EXPECT_EQ(status_of(chunk, &kTextLog, &tabled).state, RunState::kDone)
      << status_of(chunk, &kTextLog, &tabled).reason;
  // 40 channels on NCCL 2.24.3: NCCL_MIN_CTAS/NCCL_MAX_CTAS stop at 32 before 2.25.
  Planned ch40;
  ch40.channels = 40;
  std::string forced40 = with_env(R"(,"NCCL_MIN_CTAS=40","NCCL_MAX_CTAS=40")");
  forced40.replace(forced40.find("\"nccl_version\":22807"), 20, "\"nccl_version\":22403");
  EXPECT_EQ(reason(status_of(ch40, &kTextLog, &forced40)),
            "NCCL before 2.25 caps NCCL_MIN_CTAS/NCCL_MAX_CTAS at 32; NCCL 2.24.3 ran at most 32 channels");
  const std::string chunk_env = with_env(R"(,"NCCL_CHUNK_SIZE=1048576")");
  EXPECT_NE(reason(status_of({}, &kTextLog, &chunk_env))
                .find("ran with NCCL_CHUNK_SIZE=1048576: NCCL_CHUNK_SIZE is undocumented and unclamped, and "
                      "NVIDIA/nccl #2408 reports silently wrong results"),
            std::string::npos);
}
