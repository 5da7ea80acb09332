// A table row `auto,auto` with a channel count keeps NCCL's arm and sets nChannels: NCCL applies a
// tuner's nChannels to whichever arm it then picks from the cost table (NCCL src/enqueue.cc,
// ncclGetAlgoInfo: info->nMaxChannels = nMaxChannels == 0 ? info->nMaxChannels : nMaxChannels,
// after topoGetAlgoInfo). The count was once dropped without a word.
#include <gtest/gtest.h>

#include <string>

#include "plugin/table_mode_comm.hpp"
#include "support/run_cli.hpp"

namespace {

// The cost table after the tuner saw it equals two_arms() entry by entry: the arm is NCCL's.
bool cost_table_untouched(const ncclbot::test::CostTable7x3& t) {
  const ncclbot::test::CostTable7x3 nccl = ncclbot::test::two_arms();
  for (int s = 0; s < 21; ++s)
    if (t.t[s / 3][s % 3] != nccl.t[s / 3][s % 3]) return false;
  return true;
}

}  // namespace

TEST(TableChannelsOnly, AnAutoRowsChannelCountIsSetAndTheArmLeftToNccl) {
  const std::string ncclbot_format = ncclbot::test::temp_dir() + "/channels_only.csv";
  ncclbot::test::write_file(ncclbot_format,
                            "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels\n"
                            "*,allreduce,*,*,0,4096,auto,auto,8\n"
                            "*,allreduce,*,*,4097,*,auto,auto\n");
  const std::string nccl_format = ncclbot::test::temp_dir() + "/channels_only.conf";
  ncclbot::test::write_file(nccl_format,
                            "allreduce,0,4096,-1,-1,8,-1,-1\nallreduce,4097,-1,-1,-1,-1,-1,-1\n");
  for (const std::string& path : {ncclbot_format, nccl_format}) {
    ncclbot::test::TableModeComm comm(path, 8, 1);
    EXPECT_FALSE(ncclbot::test::logged(kNcclLogWarn, path));
    ncclbot::test::CostTable7x3 t = ncclbot::test::two_arms();
    int nch = 0;
    ASSERT_EQ(ncclbot::test::plugin().v6->getCollInfo(comm.ctx, 4, 4096, 1, t.ptr(), 7, 3, 0, &nch),
              kNcclSuccess);
    EXPECT_EQ(nch, 8) << path;
    EXPECT_TRUE(cost_table_untouched(t)) << path;
    EXPECT_TRUE(ncclbot::test::logged(kNcclLogInfo, "keeps NCCL's arm with 8 channels")) << path;
    // The row without a count keeps NCCL's count as well.
    ncclbot::test::CostTable7x3 big = ncclbot::test::two_arms();
    nch = 0;
    ASSERT_EQ(ncclbot::test::plugin().v6->getCollInfo(comm.ctx, 4, 8192, 1, big.ptr(), 7, 3, 0, &nch),
              kNcclSuccess);
    EXPECT_EQ(nch, 0) << path;
    EXPECT_TRUE(cost_table_untouched(big)) << path;
  }
}

// Tuner v2 (NCCL 2.21) asks for the arm itself: NCCL_ALGO_UNDEF and NCCL_PROTO_UNDEF (-1) stay.
TEST(TableChannelsOnly, TunerVersionTwoSetsTheCountAndLeavesTheArmUndefined) {
  const std::string path = ncclbot::test::temp_dir() + "/channels_only_v2.csv";
  ncclbot::test::write_file(path,
                            "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels\n"
                            "*,allreduce,*,*,0,*,auto,auto,12\n");
  ncclbot::test::EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  void* ctx = nullptr;
  ASSERT_EQ(ncclbot::test::plugin().v2->init(8, 1, ncclbot::test::recording_logger, &ctx), kNcclSuccess);
  int algo = -1, proto = -1, nch = 0;
  EXPECT_EQ(ncclbot::test::plugin().v2->getCollInfo(ctx, 4, 4096, 0, 0, 1, &algo, &proto, &nch),
            kNcclSuccess);
  EXPECT_EQ(algo, -1);
  EXPECT_EQ(proto, -1);
  EXPECT_EQ(nch, 12);
  EXPECT_EQ(ncclbot::test::plugin().v2->destroy(ctx), kNcclSuccess);
}
