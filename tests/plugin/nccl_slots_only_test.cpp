// The tuner faces NCCL, which has no HiPIPE: whatever the simulator's arm space holds beyond NCCL's
// 21 slots (HiPIPE/Simple is slot 23) never reaches the plugin. A wider cost table (an 8th row, as a
// newer NCCL could pass) is not read as HiPIPE, reports of algorithm 7 are not joined, and a
// decision table naming HiPIPE is refused with its file and line.
#include <gtest/gtest.h>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// An 8 x 3 table: Tree/LL (slot 0) at 10, Ring/Simple (slot 5) at 20, and a row 7 whose Simple
// entry (where slot 23 would sit) is the cheapest and usable.
struct CostTable8x3 {
  float t[8][3];
  CostTable8x3() {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    t[0][0] = 10.0f;
    t[1][2] = 20.0f;
    t[7][2] = 1.0f;
  }
  float** ptr() { return reinterpret_cast<float**>(t); }
};

}  // namespace

TEST(NcclSlotsOnly, RowSevenOfAWiderTableIsNeverChosen) {
  ASSERT_TRUE(plugin().ok());
  // greedy with n0 = 0 plays every untried arm in slot order first: were row 7 an arm (slot 23),
  // the third call would zero it.
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0");
  void* tuner = nullptr;
  ASSERT_EQ(plugin().v5->init(&tuner, 301, 1, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
  int zeroed[8] = {};
  for (int call = 0; call < 12; ++call) {
    CostTable8x3 c;
    ASSERT_EQ(plugin().v5->getCollInfo(tuner, 4, 1 << 20, 1, c.ptr(), 8, 3, 0, nullptr), kNcclSuccess);
    EXPECT_EQ(c.t[7][2], 1.0f) << "call " << call;  // row 7 untouched
    for (int a = 0; a < 8; ++a)
      for (int p = 0; p < 3; ++p)
        if (c.t[a][p] == 0.0f) ++zeroed[a];
    // Feed a latency back so greedy keeps moving over the arms it has.
    plugin().report(301, 1, 1, 4, 1 << 20, call % 2 == 0 ? 0 : 1, call % 2 == 0 ? 0 : 2, 10.0 + call);
  }
  EXPECT_EQ(zeroed[7], 0);
  EXPECT_EQ(zeroed[0] + zeroed[1], 12);  // every call chose Tree/LL or Ring/Simple
  EXPECT_GT(zeroed[0], 0);
  EXPECT_GT(zeroed[1], 0);
  // A latency for algorithm 7 (HiPIPE's index) is not joined: NCCL cannot have run it.
  EXPECT_EQ(plugin().report(301, 1, 1, 4, 1 << 20, 7, 2, 5.0), 1);
  EXPECT_EQ(plugin().v5->finalize(tuner), kNcclSuccess);
}

TEST(NcclSlotsOnly, DecisionTableNamingHiPipeIsRefusedWithFileAndLine) {
  ASSERT_TRUE(plugin().ok());
  const std::string path = temp_dir() + "/hipipe_table.csv";
  write_file(path,
             "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
             "*,allreduce,*,*,0,100,HiPIPE,Simple\n");
  EnvVar mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path);
  clear_log();
  void* tuner = nullptr;
  ASSERT_EQ(plugin().v5->init(&tuner, 302, 8, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
  EXPECT_TRUE(logged(kNcclLogWarn, path + ":2: unknown algorithm 'HiPIPE'"));
  CostTable7x3 t;
  t.t[0][0] = 7.0f;
  t.t[1][2] = 5.0f;
  ASSERT_EQ(plugin().v5->getCollInfo(tuner, 4, 50, 1, t.ptr(), 7, 3, 0, nullptr), kNcclSuccess);
  EXPECT_EQ(t.pick(), 1 * 3 + 2);  // NCCL's own choice, nothing written
  EXPECT_EQ(t.t[1][2], 5.0f);
  EXPECT_EQ(plugin().v5->finalize(tuner), kNcclSuccess);
}
