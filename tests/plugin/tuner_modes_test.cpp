// The tuner through its C ABI, loaded as NCCL loads it: off, table (ncclbot and NCCL-example
// formats), and the robustness rules (success always, -1 entries untouched, nChannels untouched
// unless a table says so, odd table shapes, unknown collectives, NULL logger / nChannels).
#include <gtest/gtest.h>

#include <chrono>

#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Costs for an 8-rank, 1-node AllReduce: Tree and Ring in all protocols, NVLS Simple; NCCL's own
// pick (the smallest) is Ring/LL at 5.
CostTable7x3 allreduce_table() {
  CostTable7x3 c;
  c.t[0][0] = 7.0f;   // Tree/LL
  c.t[0][1] = 9.0f;   // Tree/LL128
  c.t[0][2] = 20.0f;  // Tree/Simple
  c.t[1][0] = 5.0f;   // Ring/LL
  c.t[1][1] = 6.0f;   // Ring/LL128
  c.t[1][2] = 30.0f;  // Ring/Simple
  c.t[4][2] = 40.0f;  // NVLS/Simple
  return c;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  write_file(path, text);
  return path;
}

struct Comm {
  void* ctx = nullptr;
  Comm(size_t nranks, size_t nnodes, uint64_t id = 42, nccl_logger_t logger = recording_logger) {
    EXPECT_EQ(plugin().v5->init(&ctx, id, nranks, nnodes, logger, nullptr, nullptr), kNcclSuccess);
  }
  ~Comm() { EXPECT_EQ(plugin().v5->finalize(ctx), kNcclSuccess); }
  int call(CostTable7x3& t, int coll, size_t bytes, int* nch) {
    EXPECT_EQ(plugin().v5->getCollInfo(ctx, coll, bytes, 1, t.ptr(), 7, 3, 0, nch), kNcclSuccess);
    return t.pick();
  }
};

}  // namespace

TEST(TunerModes, LoadsWithAllVersionedSymbols) {
  ASSERT_TRUE(plugin().ok()) << dlerror();
  EXPECT_STREQ(plugin().v6->name, "ncclbot");
  EXPECT_STREQ(plugin().v5->name, "ncclbot");
}

TEST(TunerModes, OffLeavesTheTableAndChannelsAlone) {
  EnvVar mode("NCCLBOT_MODE", "off");
  Comm comm(8, 1);
  CostTable7x3 t = allreduce_table();
  const CostTable7x3 before = t;
  int nch = 0;
  EXPECT_EQ(comm.call(t, 4, 1 << 20, &nch), 1 * 3 + 0);  // NCCL's own Ring/LL
  EXPECT_EQ(std::memcmp(t.t, before.t, sizeof t.t), 0);
  EXPECT_EQ(nch, 0);
}

TEST(TunerModes, NcclbotTableChoosesByCollectiveSizeAndShape) {
  const std::string path =
      write_temp("table.csv",
                 "# exported by a study\n"
                 "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
                 "h100-ib-b,allreduce,1,8,0,1048576,Ring,Simple\n"  // other fabric: dropped
                 "h100-ib-a,allreduce,2,8,0,*,Tree,Simple\n"        // other shape
                 "h100-ib-a,allreduce,1,8,0,65535,Tree,LL128\n"
                 "h100-ib-a,allreduce,1,8,65536,1048576,NVLS,Simple\n"
                 "*,allreduce,*,*,1048577,*,auto,auto\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path), fabric("NCCLBOT_FABRIC", "h100-ib-a");
  Comm comm(8, 1);
  int nch = 0;
  CostTable7x3 small = allreduce_table();
  EXPECT_EQ(comm.call(small, 4, 4096, &nch), 0 * 3 + 1);  // Tree/LL128 set to 0
  EXPECT_EQ(small.t[0][1], 0.0f);
  EXPECT_EQ(small.t[1][0], 5.0f);  // the others keep NCCL's costs
  CostTable7x3 mid = allreduce_table();
  EXPECT_EQ(comm.call(mid, 4, 1048576, &nch), 4 * 3 + 2);  // max_bytes is inclusive
  CostTable7x3 big = allreduce_table();
  EXPECT_EQ(comm.call(big, 4, 1048577, &nch), 1 * 3 + 0);  // the auto row keeps NCCL's pick
  CostTable7x3 gather = allreduce_table();
  EXPECT_EQ(comm.call(gather, 2, 4096, &nch), 1 * 3 + 0);  // no AllGather row
  EXPECT_EQ(nch, 0);
}

TEST(TunerModes, TableRowWhoseArmIsIgnoredFallsThroughToTheNextRow) {
  const std::string path = write_temp("table2.csv",
                                      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
                                      "*,allreduce,*,*,0,*,PAT,Simple\n"  // -1 in this table: never touched
                                      "*,allreduce,*,*,0,*,Tree,Simple\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  Comm comm(8, 1);
  CostTable7x3 t = allreduce_table();
  EXPECT_EQ(comm.call(t, 4, 4096, nullptr), 0 * 3 + 2);
  EXPECT_EQ(t.t[6][2], -1.0f);
}

TEST(TunerModes, NcclExampleCsvFormatWithChannels) {
  // NCCL's ext-tuner/example format: collective_type,min_bytes,max_bytes,algorithm,protocol,
  // channels,nNodes,nRanks[,numPipeOps[,regBuff]], -1 = any.
  const std::string path = write_temp("nccl_tuner.conf",
                                      "# NCCL example tuner\n"
                                      "allreduce,0,65536,tree,simple,8,-1,-1\n"
                                      "allreduce,65537,-1,ring,ll128,-1,1,16\n"   // nRanks 16: not this comm
                                      "allreduce,65537,-1,ring,ll128,-1,1,8,2\n"  // numPipeOps 2 only
                                      "allreduce,65537,-1,nvls,simple,-1,-1,-1\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  Comm comm(8, 1);
  int nch = 0;
  CostTable7x3 t = allreduce_table();
  EXPECT_EQ(comm.call(t, 4, 32768, &nch), 0 * 3 + 2);
  EXPECT_EQ(nch, 8);
  nch = 0;
  CostTable7x3 big = allreduce_table();
  EXPECT_EQ(plugin().v5->getCollInfo(comm.ctx, 4, 1 << 20, 2, big.ptr(), 7, 3, 0, &nch), kNcclSuccess);
  EXPECT_EQ(big.pick(), 1 * 3 + 1);
  EXPECT_EQ(nch, 0);  // channels -1: left alone (NCCL's example would force 1)
  CostTable7x3 other = allreduce_table();
  EXPECT_EQ(comm.call(other, 4, 1 << 20, &nch), 4 * 3 + 2);  // numPipeOps 1: the NVLS row
}

// Tuner v6's getChunkSize: a row's chunk_bytes for the arm NCCL runs, NCCL's value everywhere else
// (another arm, no chunk column, '*', off mode, a NULL context).
TEST(TunerModes, GetChunkSizeFollowsTheTablesChunkColumn) {
  ASSERT_NE(plugin().v6, nullptr);
  ASSERT_NE(plugin().v6->getChunkSize, nullptr);
  const std::string path =
      write_temp("chunks.csv",
                 "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n"
                 "*,allreduce,*,*,0,65536,Tree,Simple,*,131072\n"
                 "*,allreduce,*,*,65537,*,Ring,LL128,4,*\n"
                 "*,allreduce,*,*,65537,*,Ring,Simple\n"
                 "*,allgather,*,*,0,*,Ring,Simple,*,524288\n"
                 "*,broadcast,*,*,0,*,auto,auto\n"
                 "*,broadcast,*,*,0,*,Ring,Simple,*,262144\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  void* ctx = nullptr;
  ASSERT_EQ(plugin().v6->init(&ctx, 91, 8, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
  ASSERT_NE(ctx, nullptr);
  CostTable7x3 t = allreduce_table();
  int nch = 0;
  EXPECT_EQ(plugin().v6->getCollInfo(ctx, 4, 4096, 1, t.ptr(), 7, 3, 0, &nch), kNcclSuccess);
  EXPECT_EQ(t.pick(), 0 * 3 + 2);  // Tree/Simple, as in v5
  auto chunk = [&](int coll, size_t bytes, int algo, int proto) {
    size_t c = 12345;  // NCCL's own value
    EXPECT_EQ(plugin().v6->getChunkSize(ctx, coll, bytes, algo, proto, 8, &c), kNcclSuccess);
    return c;
  };
  EXPECT_EQ(chunk(4, 4096, 0, 2), 131072u);     // the row that chose Tree/Simple
  EXPECT_EQ(chunk(4, 4096, 1, 2), 12345u);      // an arm no row names for this size
  EXPECT_EQ(chunk(4, 1 << 20, 1, 1), 12345u);   // chunk_bytes '*'
  EXPECT_EQ(chunk(4, 1 << 20, 1, 2), 12345u);   // no chunk column
  EXPECT_EQ(chunk(2, 1 << 20, 1, 2), 524288u);  // allgather (ncclFunc_t 2), Ring/Simple
  EXPECT_EQ(chunk(0, 4096, 1, 2), 12345u);      // broadcast: the "keep NCCL's choice" row decided
  EXPECT_EQ(plugin().v6->getChunkSize(ctx, 4, 4096, 0, 2, 8, nullptr), kNcclSuccess);
  size_t untouched = 7;
  EXPECT_EQ(plugin().v6->getChunkSize(nullptr, 4, 4096, 0, 2, 8, &untouched), kNcclSuccess);
  EXPECT_EQ(untouched, 7u);
  EXPECT_EQ(plugin().v6->finalize(ctx), kNcclSuccess);
  {
    EnvVar off("NCCLBOT_MODE", "off");
    void* octx = nullptr;
    ASSERT_EQ(plugin().v6->init(&octx, 92, 8, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
    size_t c = 12345;
    EXPECT_EQ(plugin().v6->getChunkSize(octx, 4, 4096, 0, 2, 8, &c), kNcclSuccess);
    EXPECT_EQ(c, 12345u);
    plugin().v6->finalize(octx);
  }
}

TEST(TunerModes, AChunkSizeNeedsAnArmAndAnInteger) {
  for (const char* row :
       {"*,allreduce,*,*,0,*,auto,auto,*,65536\n", "*,allreduce,*,*,0,*,Ring,LL,*,big\n",
        "*,allreduce,*,*,0,*,Ring,LL,*,2147483648\n", "*,allreduce,*,*,0,*,Ring,LL,*,1,2\n"}) {
    const std::string path = write_temp(
        "badchunk.csv",
        std::string("fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n") + row);
    EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
    clear_log();
    Comm comm(8, 1);
    EXPECT_TRUE(logged(kNcclLogWarn, path + ":2: ")) << row;
  }
}

// NCCL_ALGO and NCCL_PROTO naming one algorithm and one protocol leave NCCL one arm: online mode
// steps aside (NCCL's choice on every call, said once at init).
TEST(TunerModes, OnlineStepsAsideWhenTheUserLeavesNcclOneArm) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
      agree("NCCLBOT_AGREEMENT", "local"), algo("NCCL_ALGO", "ring"), proto("NCCL_PROTO", "Simple");
  clear_log();
  Comm comm(8, 1, 301);
  EXPECT_TRUE(logged(kNcclLogInfo,
                     "NCCL_ALGO=ring NCCL_PROTO=Simple leave NCCL one arm (Ring/Simple): nothing "
                     "to learn, ncclbot steps aside"));
  EXPECT_TRUE(logged(kNcclLogInfo, "mode off"));
  CostTable7x3 t;  // what NCCL passes: Ring/Simple alone
  t.t[1][2] = 30.0f;
  EXPECT_EQ(comm.call(t, 4, 4096, nullptr), 1 * 3 + 2);
}

// Any other restriction: the plugin learns over the arms each table leaves and names them at a
// context's first call; lists, exclusions and per-collective forms never count as one arm.
TEST(TunerModes, OnlineNamesTheArmsARestrictedTableLeaves) {
  for (const auto& [a, p] : std::vector<std::pair<std::string, std::string>>{{"Tree,Ring", ""},
                                                                             {"^NVLS", "Simple"},
                                                                             {"allreduce:ring", "simple"},
                                                                             {"ring", ""},
                                                                             {"Ring", "^LL"}}) {
    EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
        agree("NCCLBOT_AGREEMENT", "local"), algo("NCCL_ALGO", a), proto("NCCL_PROTO", p);
    if (p.empty()) unsetenv("NCCL_PROTO");
    clear_log();
    Comm comm(8, 1, 302);
    EXPECT_FALSE(logged(kNcclLogInfo, "steps aside")) << a << " " << p;
    EXPECT_TRUE(
        logged(kNcclLogInfo, "restrict NCCL's cost tables: ncclbot learns over the arms each table leaves"))
        << a << " " << p;
    CostTable7x3 t = allreduce_table();
    for (int proto_index = 0; proto_index < 3; ++proto_index) t.t[4][proto_index] = -1.0f;  // no NVLS
    t.t[0][1] = -1.0f;                                                                      // no Tree/LL128
    comm.call(t, 4, 4096, nullptr);
    EXPECT_TRUE(logged(kNcclLogInfo, "; arms left: Tree/LL Tree/Simple Ring/LL Ring/LL128 Ring/Simple"))
        << a << " " << p;
  }
}

TEST(TunerModes, BadTableWarnsWithFileAndLineAndPassesThrough) {
  const std::string path = write_temp("bad.csv",
                                      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
                                      "*,allreduce,*,*,0,100,Tree,LL\n"
                                      "*,allreduce,*,*,0,100,Hypercube,LL\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  clear_log();
  Comm comm(8, 1);
  EXPECT_TRUE(logged(kNcclLogWarn, path + ":3: unknown algorithm 'Hypercube'"));
  CostTable7x3 t = allreduce_table();
  EXPECT_EQ(comm.call(t, 4, 50, nullptr), 1 * 3 + 0);
}

TEST(TunerModes, MissingTableWarnsAndPassesThrough) {
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", "/nonexistent/table.csv");
  clear_log();
  Comm comm(8, 1);
  EXPECT_TRUE(logged(kNcclLogWarn, "/nonexistent/table.csv: cannot open"));
}

TEST(TunerModes, ADeviceAsTableFailsFastWithAWarning) {
  // /dev/zero would be read forever (NCCL's communicator creation hung at 3 GB before the cap).
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", "/dev/zero");
  clear_log();
  const auto t0 = std::chrono::steady_clock::now();
  Comm comm(8, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(logged(kNcclLogWarn, "/dev/zero: not a regular file"));
  const int nccl_pick = allreduce_table().pick();
  CostTable7x3 t = allreduce_table();
  EXPECT_EQ(comm.call(t, 4, 50, nullptr), nccl_pick);
}

TEST(TunerModes, LogsThroughNcclLoggerWithTheTuningFlag) {
  EnvVar mode("NCCLBOT_MODE", "off");
  clear_log();
  { Comm comm(8, 1); }
  std::lock_guard<std::mutex> lock(log_mutex());
  ASSERT_FALSE(log_lines().empty());
  for (const auto& l : log_lines()) EXPECT_NE(l.flags & kNcclLogTuning, 0u) << l.text;
}

TEST(TunerModes, RobustToOddInputs) {
  const std::string path = write_temp("any.csv",
                                      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
                                      "*,*,*,*,0,*,Tree,LL\n");
  for (const char* mode_name : {"off", "table", "online"}) {
    EnvVar mode("NCCLBOT_MODE", mode_name), table("NCCLBOT_TABLE", path),
        policy("NCCLBOT_POLICY", "ucb1:c=0.5");
    Comm comm(1, 1, 7, nullptr);  // NULL logger
    // Unknown collective types (2.28 has 11; anything else must pass through), 0 bytes, NULL nChannels.
    for (int coll : {-1, 5, 10, 11, 12, 1000}) {
      CostTable7x3 t = allreduce_table();
      EXPECT_EQ(plugin().v5->getCollInfo(comm.ctx, coll, 0, 1, t.ptr(), 7, 3, 0, nullptr), kNcclSuccess);
      for (int s = 0; s < 21; ++s) {
        if (allreduce_table().t[s / 3][s % 3] < 0) {
          EXPECT_EQ(t.t[s / 3][s % 3], -1.0f) << mode_name << " " << coll;
        }
      }
    }
    // numAlgo / numProto other than 7 / 3: only entries inside the given shape are touched.
    for (int na : {1, 6, 7, 9})
      for (int np : {1, 2, 3, 4}) {
        std::vector<float> t(size_t(na * np) + 4, 123.0f);  // guard band after the table
        for (int i = 0; i < na * np; ++i) t[size_t(i)] = (i % 2) ? 3.0f : -1.0f;
        EXPECT_EQ(plugin().v5->getCollInfo(comm.ctx, 4, 4096, 1, reinterpret_cast<float**>(t.data()), na, np,
                                           0, nullptr),
                  kNcclSuccess);
        for (int i = 0; i < na * np; ++i) {
          if (i % 2 == 0) {
            EXPECT_EQ(t[size_t(i)], -1.0f);
          }
        }
        for (int i = na * np; i < na * np + 4; ++i) EXPECT_EQ(t[size_t(i)], 123.0f);
      }
    // A table with nothing usable, and a NULL table.
    CostTable7x3 none;
    EXPECT_EQ(plugin().v5->getCollInfo(comm.ctx, 4, 4096, 1, none.ptr(), 7, 3, 0, nullptr), kNcclSuccess);
    EXPECT_EQ(none.pick(), -1);
    EXPECT_EQ(plugin().v5->getCollInfo(comm.ctx, 4, 4096, 1, nullptr, 7, 3, 0, nullptr), kNcclSuccess);
  }
  // NULL contexts (a failed init) are pass-through too.
  CostTable7x3 t = allreduce_table();
  EXPECT_EQ(plugin().v5->getCollInfo(nullptr, 4, 4096, 1, t.ptr(), 7, 3, 0, nullptr), kNcclSuccess);
  EXPECT_EQ(plugin().v5->finalize(nullptr), kNcclSuccess);
  EXPECT_EQ(plugin().v5->init(nullptr, 1, 1, 1, nullptr, nullptr, nullptr), kNcclSuccess);
}

TEST(TunerModes, OlderAbiVersions) {
  const std::string path = write_temp("v.csv",
                                      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
                                      "*,allreduce,*,*,0,*,Tree,Simple\n"
                                      "*,allgather,*,*,0,*,NVLS,Simple\n"
                                      "*,allgather,*,*,0,*,Ring,LL\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  void* ctx = nullptr;
  ASSERT_EQ(plugin().v4->init(8, 1, recording_logger, &ctx), kNcclSuccess);
  CostTable7x3 t4 = allreduce_table();
  EXPECT_EQ(plugin().v4->getCollInfo(ctx, 4, 4096, 1, t4.ptr(), 7, 3, 1, nullptr), kNcclSuccess);
  EXPECT_EQ(t4.pick(), 2);
  CostTable7x3 t3 = allreduce_table();
  EXPECT_EQ(plugin().v3->getCollInfo(ctx, 4, 4096, 1, t3.ptr(), 7, 3, nullptr), kNcclSuccess);
  EXPECT_EQ(t3.pick(), 2);
  // v2 has no table: algorithm and protocol are returned; NVLS is skipped without NVLS support.
  int algo = -1, proto = -1, nch = 0;
  EXPECT_EQ(plugin().v2->getCollInfo(ctx, 2, 4096, 0, 0, 1, &algo, &proto, &nch), kNcclSuccess);
  EXPECT_EQ(algo, 1);
  EXPECT_EQ(proto, 0);
  EXPECT_EQ(plugin().v2->getCollInfo(ctx, 2, 4096, 0, 1, 1, &algo, &proto, &nch), kNcclSuccess);
  EXPECT_EQ(algo, 4);
  EXPECT_EQ(proto, 2);
  EXPECT_EQ(nch, 0);
  EXPECT_EQ(plugin().v4->destroy(ctx), kNcclSuccess);
}

TEST(TunerModes, InitAndFinalizeRepeatedAndInterleaved) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=1");
  std::vector<void*> ctxs;
  for (int round = 0; round < 50; ++round) {
    void* tuner = nullptr;
    void* prof = nullptr;
    int mask = 0;
    if (round % 2) plugin().prof5->init(&prof, uint64_t(round), &mask, "c", 1, 1, 0, nullptr);
    plugin().v5->init(&tuner, uint64_t(round), 1, 1, nullptr, nullptr, nullptr);
    if (!(round % 2)) plugin().prof5->init(&prof, uint64_t(round), &mask, "c", 1, 1, 0, nullptr);
    EXPECT_EQ(mask, int(kNcclProfileColl | kNcclProfileKernelCh | kNcclProfileCollApi));
    CostTable7x3 t = allreduce_table();
    plugin().v5->getCollInfo(tuner, 4, 4096, 1, t.ptr(), 7, 3, 0, nullptr);
    if (round % 3 == 0) {
      plugin().v5->finalize(tuner);
      plugin().prof5->finalize(prof);
    } else {
      plugin().prof5->finalize(prof);
      ctxs.push_back(tuner);  // finalized later, out of order
    }
  }
  for (auto it = ctxs.rbegin(); it != ctxs.rend(); ++it) EXPECT_EQ(plugin().v5->finalize(*it), kNcclSuccess);
}
