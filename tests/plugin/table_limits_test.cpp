// What a decision table may ask of NCCL: chunk sizes NCCL keeps as they are and channel counts
// NCCL has, refused at load with file:line otherwise; and getChunkSize answering only for NCCL's
// own algorithm and protocol indices. The grains are NCCL's ncclProtoGrainSize (NCCL
// src/include/device.h:328-334): LL 16 B, LL128 1920 B, Simple 512 B; the channels 0..64
// (MAXCHANNELS, NCCL src/graph/connect.cc:334-345; 0 is NCCL's own count).
#include <gtest/gtest.h>

#include <string>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

namespace {

const char* const kLimitsHeader =
    "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n";

std::string write_limits_table(const std::string& name, const std::string& rows) {
  const std::string path = ncclbot::test::temp_dir() + "/" + name;
  ncclbot::test::write_file(path, kLimitsHeader + rows);
  return path;
}

// A v6 communicator of 8 ranks on one node in table mode with `path`.
struct LimitsComm {
  void* ctx = nullptr;
  explicit LimitsComm(const std::string& path) : mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path) {
    ncclbot::test::clear_log();
    EXPECT_EQ(
        ncclbot::test::plugin().v6->init(&ctx, 77, 8, 1, ncclbot::test::recording_logger, nullptr, nullptr),
        kNcclSuccess);
  }
  ~LimitsComm() { ncclbot::test::plugin().v6->finalize(ctx); }
  size_t chunk(int coll, size_t bytes, int algo, int proto) {
    size_t c = 12345;  // NCCL's own value
    EXPECT_EQ(ncclbot::test::plugin().v6->getChunkSize(ctx, coll, bytes, algo, proto, 1, &c), kNcclSuccess);
    return c;
  }
  ncclbot::test::EnvVar mode, table;
};

}  // namespace

TEST(TableLimits, AChunkOffItsProtocolsGrainIsRefusedWithFileAndLine) {
  ASSERT_TRUE(ncclbot::test::plugin().ok());
  // Each below its protocol's grain (NCCL would round it to 0) or no multiple of it.
  for (const char* row :
       {"*,allreduce,*,*,0,*,Ring,Simple,*,1\n", "*,allreduce,*,*,0,*,Ring,Simple,*,100\n",
        "*,allreduce,*,*,0,*,Ring,Simple,*,511\n", "*,allreduce,*,*,0,*,Ring,Simple,*,1000\n",
        "*,allreduce,*,*,0,*,Tree,LL128,*,1024\n", "*,allreduce,*,*,0,*,Tree,LL128,*,3000\n",
        "*,allreduce,*,*,0,*,Ring,LL,*,8\n", "*,allreduce,*,*,0,*,Ring,LL,*,40\n"}) {
    const std::string path = write_limits_table("offgrain.csv", std::string("# a comment\n") + row);
    LimitsComm comm(path);
    EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, path + ":3: chunk_bytes ")) << row;
    EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, "grain")) << row;
    EXPECT_TRUE(ncclbot::test::logged(kNcclLogInfo, "mode off")) << row;
    EXPECT_EQ(comm.chunk(4, 4096, 1, 2), 12345u) << row;  // NCCL's own chunk
  }
}

TEST(TableLimits, ChunksOnTheGrainAreKept) {
  // 2 x 512, 2 x 1920 and 3 x 16: multiples of each grain, kept as they are.
  const std::string path = write_limits_table("ongrain.csv",
                                              "*,allreduce,*,*,0,*,Ring,Simple,*,1024\n"
                                              "*,allreduce,*,*,0,*,Tree,LL128,*,3840\n"
                                              "*,allreduce,*,*,0,*,Ring,LL,*,48\n");
  LimitsComm comm(path);
  EXPECT_FALSE(ncclbot::test::logged(kNcclLogWarn, path));
  EXPECT_EQ(comm.chunk(4, 4096, 1, 2), 1024u);
  EXPECT_EQ(comm.chunk(4, 4096, 0, 1), 3840u);
  EXPECT_EQ(comm.chunk(4, 4096, 1, 0), 48u);
}

TEST(TableLimits, AChannelCountNcclDoesNotHaveIsRefusedWithFileAndLine) {
  for (const char* row : {"*,allreduce,*,*,0,*,Ring,Simple,65\n", "*,allreduce,*,*,0,*,Ring,Simple,1000\n",
                          "*,allreduce,*,*,0,*,Ring,Simple,-5\n"}) {
    const std::string path = write_limits_table("channels.csv", row);
    LimitsComm comm(path);
    EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, path + ":2: bad channels")) << row;
  }
  // NCCL's example format reads its channels column the same way.
  const std::string nccl = ncclbot::test::temp_dir() + "/nccl_channels.conf";
  ncclbot::test::write_file(nccl, "allreduce,0,65536,tree,simple,1000,-1,-1\n");
  LimitsComm comm(nccl);
  EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, nccl + ":1: bad channels '1000'"));
}

TEST(TableLimits, SixtyFourChannelsAreSetAndZeroKeepsNcclsCount) {
  const std::string path = write_limits_table("channels_ok.csv",
                                              "*,allreduce,*,*,0,4096,Ring,Simple,64\n"
                                              "*,allreduce,*,*,4097,*,Ring,Simple,0\n");
  LimitsComm comm(path);
  ncclbot::test::CostTable7x3 t = ncclbot::test::two_arms();
  int nch = 0;
  ASSERT_EQ(ncclbot::test::plugin().v6->getCollInfo(comm.ctx, 4, 4096, 1, t.ptr(), 7, 3, 0, &nch),
            kNcclSuccess);
  EXPECT_EQ(nch, 64);
  nch = 0;
  ncclbot::test::CostTable7x3 big = ncclbot::test::two_arms();
  ASSERT_EQ(ncclbot::test::plugin().v6->getCollInfo(comm.ctx, 4, 8192, 1, big.ptr(), 7, 3, 0, &nch),
            kNcclSuccess);
  EXPECT_EQ(nch, 0);
}

// slot = algo * 3 + proto: algorithm 0 with protocol 5 is Ring/Simple's slot, algorithm -1 with
// protocol 5 Tree/Simple's; neither is an arm NCCL runs, so NCCL's chunk stays.
TEST(TableLimits, GetChunkSizeLeavesIndicesOutsideNcclsAlone) {
  const std::string path = write_limits_table("indices.csv",
                                              "*,allreduce,*,*,0,*,Ring,Simple,*,524288\n"
                                              "*,allreduce,*,*,0,*,Tree,Simple,*,131072\n");
  LimitsComm comm(path);
  EXPECT_EQ(comm.chunk(4, 4096, 1, 2), 524288u);  // Ring/Simple itself
  EXPECT_EQ(comm.chunk(4, 4096, 0, 5), 12345u);
  EXPECT_EQ(comm.chunk(4, 4096, -1, 5), 12345u);
  EXPECT_EQ(comm.chunk(4, 4096, 2, -4), 12345u);  // slot 2: Tree/Simple
  EXPECT_EQ(comm.chunk(4, 4096, 7, 0), 12345u);   // slot 21: past NCCL's seven algorithms
  EXPECT_EQ(comm.chunk(4, 4096, 1, 3), 12345u);   // slot 6: CollNetDirect/LL, no row of it
}
