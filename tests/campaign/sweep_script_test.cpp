// sweep.sh, the campaign's ncclbot-sweep engine from NCCL 2.31: `plan` writes it beside run.sh, one
// launch per node count and collective with that collective's planned sizes, algorithms, protocols
// and channel counts (runs with a chunk size stay run.sh's), and it keeps what finished. Run here
// with the stand-in launcher and a program in ncclbot-sweep's place that records its arguments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_cli.hpp"

using namespace ncclbot::test;
namespace fs = std::filesystem;

namespace sweep_script {

std::string sq(const std::string& s) {
  return "'" + s + "'";
}

CliResult plan_sweep(const std::string& camp, const std::string& extra, const std::string& nodes = "2") {
  return run_cli(
      "plan --fabric h100-ib-a --nodes " + nodes +
      " --gpus-per-node 8 --collectives allreduce,allgather "
      "--arms Ring/LL,Ring/Simple --channels 0,8 --chunk-bytes 0,64K --max-bytes 4K --iters 2 --out " +
      sq(camp) + " " + extra);
}

// A program in ncclbot-sweep's place: appends its arguments as one line to DIR/args.txt and exits
// with the code in DIR/exit (0 when absent).
std::string fake_sweep(const std::string& dir) {
  const std::string path = dir + "/fake-sweep";
  std::ofstream(path) << "#!/usr/bin/env bash\necho \"$*\" >> " << sq(dir + "/args.txt") << "\nexit $(cat "
                      << sq(dir + "/exit") << " 2>/dev/null || echo 0)\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

struct SweepShell {
  int exit_code = -1;
  std::string out;
};

SweepShell sweep_sh(const std::string& dir, const std::string& camp, const std::string& args = "") {
  const std::string launcher = std::string(NCCLBOT_TEST_DATA_DIR) + "/../campaign/standin_launcher.sh";
  const std::string out = dir + "/sweep.out";
  const std::string cmd = "NCCLBOT_SWEEP=" + sq(fake_sweep(dir)) + " SRUN=" + sq(launcher) + " bash " +
                          sq(camp + "/sweep.sh") + " " + args + " >" + sq(out) + " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out)};
}

}  // namespace sweep_script

using sweep_script::plan_sweep;
using sweep_script::sweep_sh;

TEST(SweepScript, OneLaunchPerNodeCountAndCollectiveWithItsPlannedArms) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  const CliResult plan = plan_sweep(camp, "");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("/sweep.sh and sweep.sbatch: the same arms by ncclbot-sweep in 2 launches"),
            std::string::npos)
      << plan.out;
  ASSERT_TRUE(fs::exists(camp + "/sweep.sh"));
  const sweep_script::SweepShell first = sweep_sh(dir, camp);
  EXPECT_EQ(first.exit_code, 0) << first.out;
  // All-reduce from 8 B, all-gather from 256 B (16 ranks: nccl-tests rounds smaller sizes), by 2 to
  // 4 KiB; Ring with LL and Simple; channels NCCL's own and 8; the 64 KiB chunk runs are not here.
  const std::string expected =
      "--collectives allreduce --bytes 8,16,32,64,128,256,512,1024,2048,4096 --algos Ring --protos LL,Simple "
      "--channels 0,8 --iterations 2 --warmup 5 --seed 1 --fabric h100-ib-a --out " +
      camp +
      "/sweeps/n2-allreduce.csv\n"
      "--collectives allgather --bytes 256,512,1024,2048,4096 --algos Ring --protos LL,Simple "
      "--channels 0,8 --iterations 2 --warmup 5 --seed 1 --fabric h100-ib-a --out " +
      camp + "/sweeps/n2-allgather.csv\n";
  EXPECT_EQ(read_all(dir + "/args.txt"), expected);
  EXPECT_TRUE(fs::exists(camp + "/sweeps/n2-allreduce.done"));
  // Again: both complete, nothing launched.
  const sweep_script::SweepShell again = sweep_sh(dir, camp);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("[1/2] n2-allreduce: complete, kept"), std::string::npos) << again.out;
  EXPECT_EQ(read_all(dir + "/args.txt"), expected);
}

TEST(SweepScript, AFailedLaunchIsRetriedAndItsFilesKept) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  ASSERT_EQ(plan_sweep(camp, "").exit_code, 0);
  sweep_script::fake_sweep(dir);
  std::ofstream(dir + "/exit") << "3\n";
  const sweep_script::SweepShell failed = sweep_sh(dir, camp, "--task 1");
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.out.find("[2/2] n2-allgather: FAILED (exit 3)"), std::string::npos) << failed.out;
  EXPECT_FALSE(fs::exists(camp + "/sweeps/n2-allgather.done"));
  // plan --status says so, from the markers.
  const CliResult st = run_cli("plan --status " + sweep_script::sq(camp));
  EXPECT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("  missing  sweep n2-allreduce: not run yet\n"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("  failed  sweep n2-allgather: no sweeps/n2-allgather.done"), std::string::npos)
      << st.out;
  EXPECT_NE(st.out.find("sweep.sh, 2 launches: 0 done, 1 missing, 1 failed\n"), std::string::npos) << st.out;
  fs::remove(dir + "/exit");
  const sweep_script::SweepShell retried = sweep_sh(dir, camp, "--task 1");
  EXPECT_EQ(retried.exit_code, 0) << retried.out;
  EXPECT_TRUE(fs::exists(camp + "/sweeps/n2-allgather.done"));
  const CliResult done = run_cli("plan --status " + sweep_script::sq(camp) + " --json");
  EXPECT_NE(done.out.find("\"name\": \"n2-allgather\",\n      \"reason\": \"\",\n      \"state\": \"done\""),
            std::string::npos)
      << done.out;
  size_t kept = 0;  // the failed attempt's log, moved aside
  for (const auto& e : fs::directory_iterator(camp + "/sweeps/attempts"))
    kept += e.path().filename().string().rfind("n2-allgather.log.", 0) == 0;
  EXPECT_EQ(kept, 1u);
  EXPECT_EQ(sweep_sh(dir, camp, "--task 2").exit_code, 2);
}

TEST(SweepScript, BeforeNccl231ThereIsNone) {
  const std::string camp = temp_dir() + "/c";
  const CliResult plan = plan_sweep(camp, "--nccl-version 2.30");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_FALSE(fs::exists(camp + "/sweep.sh"));
  EXPECT_FALSE(fs::exists(camp + "/sweep.sbatch"));
  EXPECT_EQ(plan.out.find("sweep.sh"), std::string::npos) << plan.out;
}

// sweep.sbatch: one array per node count holding the launches sweep.sh --incomplete lists (a stand-in
// sbatch echoes its arguments), and inside an allocation each task runs sweep.sh --task INDEX.
TEST(SweepScript, SweepSbatchSubmitsTheIncompleteLaunches) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  ASSERT_EQ(plan_sweep(camp, "", "2,4").exit_code, 0);
  ASSERT_TRUE(fs::exists(camp + "/sweep.sbatch"));
  ASSERT_EQ(sweep_sh(dir, camp, "--task 0").exit_code, 0);  // n2-allreduce done
  EXPECT_EQ(sweep_sh(dir, camp, "--incomplete 2").out, "1\n");
  EXPECT_EQ(sweep_sh(dir, camp, "--incomplete").out, "1\n2\n3\n");
  const std::string out = dir + "/sbatch.out";
  ASSERT_EQ(std::system(("SBATCH=echo bash " + sweep_script::sq(camp + "/sweep.sbatch") + " >" +
                         sweep_script::sq(out) + " 2>&1")
                            .c_str()),
            0);
  const std::string submitted = read_all(out);
  EXPECT_NE(submitted.find("nodes=2: submitting array tasks 1\n--chdir=" + camp + " --nodes=2 --time="),
            std::string::npos)
      << submitted;
  EXPECT_NE(submitted.find("--array=1 " + camp + "/sweep.sbatch\n"), std::string::npos) << submitted;
  EXPECT_NE(submitted.find("nodes=4: submitting array tasks 2,3\n"), std::string::npos) << submitted;
  // A task of the array, as Slurm starts it: in the campaign folder, with its index.
  const std::string task =
      "cd " + sweep_script::sq(camp) +
      " && SLURM_ARRAY_TASK_ID=1 NCCLBOT_SWEEP=" + sweep_script::sq(sweep_script::fake_sweep(dir)) +
      " SRUN=" + sweep_script::sq(std::string(NCCLBOT_TEST_DATA_DIR) + "/../campaign/standin_launcher.sh") +
      " bash sweep.sbatch >/dev/null 2>&1";
  ASSERT_EQ(std::system(task.c_str()), 0);
  EXPECT_TRUE(fs::exists(camp + "/sweeps/n2-allgather.done"));
}
