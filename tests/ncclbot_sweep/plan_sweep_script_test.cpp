// The campaign's sweep.sh end to end: `plan` for NCCL 2.32 writes it, it runs ncclbot-sweep's
// stand-in build (the program's own objects over the stand-in libnccl) under a real `mpirun` of the
// plan's geometry, 1 node x 2 GPUs, and `replay` reads the sweep it wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot_sweep/standin_sweep_run.hpp"

TEST(PlanSweepScript, RunsTheStandInUnderMpirunAndReplayReadsItsSweep) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  if (ncclbot::test::kStandinRanks != 2) GTEST_SKIP() << "the stand-in is built without MPI";
#ifdef NCCLBOT_SWEEP_STANDIN
  using namespace ncclbot;
  const std::string camp = test::temp_dir() + "/c";
  const test::CliResult plan = test::run_cli(
      "plan --fabric h100-ib-a --nodes 1 --gpus-per-node 2 --collectives allreduce "
      "--arms Ring/LL,Ring/Simple,Tree/Simple --min-bytes 1K --max-bytes 64K --iters 3 --warmup 1 "
      "--launcher mpirun --out '" +
      camp + "'");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MPIRUN='mpirun --oversubscribe' "
      "NCCLBOT_SWEEP='" NCCLBOT_SWEEP_STANDIN "' bash '" +
      camp + "/sweep.sh' >'" + camp + "/sweep.out' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_all(camp + "/sweep.out");
  ASSERT_TRUE(std::filesystem::exists(camp + "/sweeps/n1-allreduce.done"));
  // 1-64 KiB by 2: 7 contexts, each with the product of the planned algorithms and protocols
  // (Tree/LL too, which the stand-in runs), 3 timed rounds, on the 2 ranks mpirun started.
  const Sweep sweep = read_sweep_csv(camp + "/sweeps/n1-allreduce.csv");
  ASSERT_EQ(sweep.num_contexts(), 7);
  EXPECT_EQ(sweep.samples(), 3);
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    EXPECT_EQ(sweep.context(c).nodes * sweep.context(c).gpus_per_node, 2);
    for (Algo a : {Algo::kTree, Algo::kRing})
      for (Proto p : {Proto::kLL, Proto::kSimple}) EXPECT_TRUE(sweep.view().mask(c).has(arm_slot(a, p))) << c;
  }
  const test::CliResult replay =
      test::run_cli("replay --sweep '" + camp +
                    "/sweeps/n1-allreduce.csv' --policy random --policy greedy:n0=0 --seeds 1 --horizon 20");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
#endif
}
