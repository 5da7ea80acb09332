// ncclbot-sweep against the stand-in NCCL: the sweep CSV it writes is read back by the library's
// reader and by `replay`, holds each forced arm's model time on the slowest rank (so the arm NCCL ran
// is the arm asked for), NCCL's own pick goes to its side file, and refused arms are recorded as
// unavailable, not errors.
#include <gtest/gtest.h>

#include <sstream>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot_sweep/standin_sweep_run.hpp"

namespace {

using ncclbot::Collective;
using ncclbot::Sweep;
using ncclbot::test::CliResult;
using ncclbot::test::read_all;
using ncclbot::test::run_sweep_standin;
using ncclbot::test::standin_row;
using ncclbot::test::standin_slowest_us;
using ncclbot::test::temp_dir;
namespace standin = ncclbot::sweep_standin;

constexpr int kIterations = 3;

std::string csv_sweep_args(const std::string& dir, const std::string& algos) {
  return "--collectives allreduce,allgather --bytes 4096,65536 --algos " + algos +
         " --protos LL,LL128,Simple --iterations " + std::to_string(kIterations) +
         " --warmup 1 --fabric standin --out '" + dir + "/sweep.csv'";
}

int standin_func(Collective c) {
  return c == Collective::kAllGather ? standin::kAllGather : standin::kAllReduce;
}

TEST(SweepStandin, TheSweepHoldsEachForcedArmsModelTime) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(csv_sweep_args(dir, "tree,ring"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Sweep sweep = ncclbot::read_sweep_csv(dir + "/sweep.csv");
  ASSERT_EQ(sweep.num_contexts(), 4);
  EXPECT_TRUE(sweep.slot_shaped());  // every arm on NCCL's own channels: the 9-column layout
  EXPECT_NE(read_all(dir + "/sweep.sweep.toml").find("samples = \"iterations\""), std::string::npos);
  EXPECT_EQ(sweep.samples(), kIterations);
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const ncclbot::Context& ctx = sweep.context(c);
    EXPECT_EQ(ctx.fabric, "standin");
    EXPECT_EQ(ctx.nodes * ctx.gpus_per_node, ncclbot::test::kStandinRanks);
    const unsigned long long runnable = standin::runnable_ids(standin_func(ctx.collective));
    for (int slot = 0; slot < ncclbot::kNumNcclArms; ++slot) {
      const int id = standin_row(slot / 3, slot % 3);
      const bool listed = slot / 3 <= 1;  // Tree and Ring
      const bool runs = listed && id >= 0 && (runnable >> id & 1ull);
      ASSERT_EQ(sweep.view().mask(c).has(slot), runs) << "context " << c << " slot " << slot;
      if (!runs) continue;
      for (int i = 0; i < kIterations; ++i)
        EXPECT_FLOAT_EQ(sweep.view().sample(c, slot, i),
                        standin_slowest_us(id, standin::kStandinDefaultChannels, ctx.bytes))
            << "context " << c << " slot " << slot;
    }
  }
}

TEST(SweepStandin, RingLLRunsLLWhereNcclWouldPickLL128FromBoth) {
  // At 64 KiB the stand-in's LL128 is cheaper than LL, so a selection naming both ("RING_LL" alone,
  // a prefix of "RING_LL128") would run LL128 and credit its time to LL.
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(
      "--bytes 65536 --algos ring --protos LL --iterations 2 --warmup 0 --out '" + dir + "/sweep.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Sweep sweep = ncclbot::read_sweep_csv(dir + "/sweep.csv");
  const int ll = standin_row(1, 0), ll128 = standin_row(1, 1);
  ASSERT_LT(standin_slowest_us(ll128, 8, 65536), standin_slowest_us(ll, 8, 65536));
  EXPECT_FLOAT_EQ(sweep.view().sample(0, ncclbot::arm_slot(ncclbot::Algo::kRing, ncclbot::Proto::kLL), 0),
                  standin_slowest_us(ll, 8, 65536));
}

TEST(SweepStandin, NcclsOwnPickGoesToItsSideFile) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  ASSERT_EQ(run_sweep_standin(csv_sweep_args(dir, "ring")).exit_code, 0);
  std::istringstream own(read_all(dir + "/sweep.nccl-own.csv"));
  std::string line;
  std::getline(own, line);
  EXPECT_EQ(line, "fabric,collective,nodes,gpus_per_node,bytes,sample,time_us");
  int rows = 0;
  while (std::getline(own, line)) {
    ++rows;
    const bool gather = line.find(",AllGather,") != std::string::npos;
    const uint64_t bytes = line.find(",65536,") != std::string::npos ? 65536 : 4096;
    // NCCL's own pick: the cheapest of what this machine runs for the collective, on its own channels.
    const int func = gather ? standin::kAllGather : standin::kAllReduce;
    const int pick = standin::cheapest(standin::runnable_ids(func), standin::kStandinDefaultChannels, bytes,
                                       ncclbot::test::kStandinRanks - 1);
    const float want = standin_slowest_us(pick, standin::kStandinDefaultChannels, bytes);
    EXPECT_FLOAT_EQ(std::stof(line.substr(line.rfind(',') + 1)), want) << line;
  }
  EXPECT_EQ(rows, 4 * kIterations);
}

TEST(SweepStandin, RefusedArmsAreUnavailableNotErrors) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(csv_sweep_args(dir, "tree,nvls"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string unavailable = read_all(dir + "/sweep.unavailable.csv");
  // Tree serves AllReduce only; this machine has no NVLS; NVLS has no LL or LL128 kernel at all.
  const std::string scale = "1," + std::to_string(ncclbot::test::kStandinRanks) + ",";
  EXPECT_NE(unavailable.find(
                "standin,AllGather," + scale +
                "4096,Tree,LL128,0,0,\"invalid argument: config->algSelection \"\"TREE_LL128\"\" cannot be "
                "honored\""),
            std::string::npos)
      << unavailable;
  EXPECT_NE(unavailable.find("standin,AllReduce," + scale + "65536,NVLS,Simple,0,0,"), std::string::npos);
  EXPECT_NE(unavailable.find("NVLS,LL,0,0,\"NCCL has no kernel for this algorithm and protocol\""),
            std::string::npos);
  // 2 sizes x (AllReduce: 3 NVLS; AllGather: 3 Tree + 3 NVLS) rows, after the header.
  EXPECT_EQ(ncclbot::test::count_of(unavailable, "\n"), 1u + 2 * (3 + 6));
  const Sweep sweep = ncclbot::read_sweep_csv(dir + "/sweep.csv");
  EXPECT_EQ(sweep.num_contexts(), 2);  // the AllGather contexts ran nothing but NCCL's own pick
}

TEST(SweepStandin, ChannelArmsAreKnobColumnsWithTheirOwnTimes) {
  // minCTAs = maxCTAs = channels: the stand-in runs that many, and its model charges 16 us / channels.
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(
      "--bytes 4096 --algos ring --protos LL128,Simple --channels 0,4,16 "
      "--iterations 2 --warmup 1 --out '" +
      dir + "/sweep.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Sweep sweep = ncclbot::read_sweep_csv(dir + "/sweep.csv");
  ASSERT_FALSE(sweep.slot_shaped());
  ASSERT_EQ(sweep.num_contexts(), 1);
  const auto arms = sweep.arms(0);
  ASSERT_EQ(arms.size(), 6u);
  for (size_t i = 0; i < arms.size(); ++i) {
    const int id = standin_row(int(arms[i].algo), int(arms[i].proto));
    const int channels = arms[i].channels ? arms[i].channels : standin::kStandinDefaultChannels;
    for (int s = 0; s < 2; ++s)
      EXPECT_FLOAT_EQ(sweep.arm_sample(0, int(i), s), standin_slowest_us(id, channels, 4096)) << i;
  }
  EXPECT_EQ(arms[1].channels, 4);
  EXPECT_EQ(arms[2].channels, 16);
}

TEST(SweepStandin, ChannelsAboveTheCommunicatorsAreUnavailable) {
  // The stand-in's communicator keeps at most 32 channels, whatever the program asks for.
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(
      "--bytes 4096 --algos ring --protos Simple --channels 0,48 --iterations 2 "
      "--warmup 0 --out '" +
      dir + "/sweep.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string unavailable = read_all(dir + "/sweep.unavailable.csv");
  EXPECT_NE(unavailable.find(",4096,Ring,Simple,48,0,\"invalid argument: config->maxCTAs 48 is above the "
                             "communicator's 32\""),
            std::string::npos)
      << unavailable;
  EXPECT_EQ(ncclbot::test::count_of(unavailable, "\n"), 2u);
  EXPECT_EQ(ncclbot::read_sweep_csv(dir + "/sweep.csv").view().mask(0).count(),
            1);  // Ring/Simple, NCCL's channels
}

TEST(SweepStandin, ReplayReadsTheSweep) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  ASSERT_EQ(run_sweep_standin(csv_sweep_args(dir, "tree,ring")).exit_code, 0);
  const CliResult r =
      ncclbot::test::run_cli("replay --sweep '" + dir +
                             "/sweep.csv' --policy random --policy greedy:n0=0 --seeds 2 --horizon 16 "
                             "--threads 1 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"configs\""), std::string::npos);
}

}  // namespace
