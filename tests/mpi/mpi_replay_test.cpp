// `mpirun -np N ncclbot-mpi replay ...` on the CPU backend prints exactly what one process prints,
// and a rank that dies or hangs ends the job with a message naming it. Skipped when this build has no
// ncclbot-mpi (MPI not found by CMake) or no mpirun on PATH.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

std::string mpi_binary() {
  return (std::filesystem::path(NCCLBOT_BINARY).parent_path() / "ncclbot-mpi").string();
}

bool have_mpi() {
  return std::filesystem::exists(mpi_binary()) && std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

struct ShellRun {
  int exit_code = -1;
  std::string out, err;
};

// mpirun refuses root unless told; CI runs as root in a container.
ShellRun run_sh(const std::string& command) {
  const std::string dir = temp_dir();
  const std::string full =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 " +
      command + " >'" + dir + "/out' 2>'" + dir + "/err' </dev/null";
  const int status = std::system(full.c_str());
  ShellRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(dir + "/out");
  r.err = read_all(dir + "/err");
  return r;
}

std::string write_sweep(const std::string& dir) {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  int k = 0;
  for (int nodes : {2, 4, 8})
    for (int bytes : {1024, 65536, 1048576}) {
      ++k;
      const std::string ctx = "h100-ib-a,allreduce," + std::to_string(nodes) + ",8," + std::to_string(bytes);
      for (int r = 0; r < 3; ++r) {
        csv += ctx + ",Tree,LL," + std::to_string(r) + "," + std::to_string(30 + k + r) + ",10\n";
        csv += ctx + ",Ring,LL128," + std::to_string(r) + "," + std::to_string(20 + 2 * k - r) + ",15\n";
        csv += ctx + ",Ring,Simple," + std::to_string(r) + "," + std::to_string(25 + (k * 7) % 11) + ",40\n";
      }
    }
  const std::string path = dir + "/sweep.csv";
  write_file(path, csv);
  return path;
}

std::string replay_args(const std::string& sweep) {
  return " replay --sweep '" + sweep +
         "' --policy auto --policy 'ucb1:c=0.05|0.2,n0=0|2' --policy thompson --seeds 3 --horizon 40"
         " --threads 1 --json";
}

}  // namespace

TEST(MpiReplay, AnyRankCountPrintsTheSingleProcessBytes) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string dir = temp_dir(), args = replay_args(write_sweep(dir));
  const ShellRun one = run_sh("'" + std::string(NCCLBOT_BINARY) + "'" + args);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_FALSE(one.out.empty());
  for (const char* np : {"2", "3"}) {
    const ShellRun many =
        run_sh("mpirun -np " + std::string(np) + " --oversubscribe '" + mpi_binary() + "'" + args);
    ASSERT_EQ(many.exit_code, 0) << many.err;
    EXPECT_EQ(many.out, one.out) << "-np " << np;
  }
  // ncclbot-mpi outside mpirun is one process.
  const ShellRun alone = run_sh("'" + mpi_binary() + "'" + args);
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(alone.out, one.out);
}

TEST(MpiReplay, KilledRankIsReportedByNumber) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string dir = temp_dir(), args = replay_args(write_sweep(dir));
  // NCCLBOT_FAULT_KILL_RANK=1: rank 1 dies by SIGKILL before reporting its results.
  const ShellRun r = run_sh("mpirun -np 2 -x NCCLBOT_FAULT_KILL_RANK=1 '" + mpi_binary() + "'" + args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;  // no partial report
  EXPECT_NE(r.err.find("rank 1"), std::string::npos) << r.err;
}

// NCCLBOT_FAULT_HANG_RANK=1: rank 1 sleeps for ever instead of reporting. With --rank-timeout 1,
// rank 0 names it and aborts the job within seconds instead of waiting for ever (`timeout 120`
// only keeps a broken build from hanging the test suite).
TEST(MpiReplay, HungRankIsNamedAndTheJobAborted) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string dir = temp_dir(), args = replay_args(write_sweep(dir));
  const auto t0 = std::chrono::steady_clock::now();
  const ShellRun r = run_sh("timeout 120 mpirun -np 2 -x NCCLBOT_FAULT_HANG_RANK=1 '" + mpi_binary() + "'" +
                            args + " --rank-timeout 1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: the hung rank was not detected";
  EXPECT_LT(seconds, 60.0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("rank 1 has not reported for 1 s (hung?); aborting all 2 ranks"), std::string::npos)
      << r.err;
}

TEST(MpiReplay, ShardIsRejectedUnderRanks) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string dir = temp_dir(), args = replay_args(write_sweep(dir));
  const ShellRun r =
      run_sh("mpirun -np 2 '" + mpi_binary() + "'" + args + " --shard 0/2 --out '" + dir + "/p'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
}

// Tune's two phases over ranks: every rank makes the same choice from the same merged bits, and
// rank 0 prints what one process prints.
TEST(MpiTune, AnyRankCountPrintsTheSingleProcessBytes) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string dir = temp_dir();
  const std::string args =
      " tune --sweep '" + write_sweep(dir) +
      "' --policy 'ucb1:c=0.05|0.2,n0=0|2' --policy 'thompson:sigma=0.05|0.2' --policy auto"
      " --tune-nodes 2 --score-nodes 4,8 --seeds 3 --horizon 40 --threads 1 --json";
  const ShellRun one = run_sh("'" + std::string(NCCLBOT_BINARY) + "'" + args);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (const char* np : {"2", "3"}) {
    const ShellRun many =
        run_sh("mpirun -np " + std::string(np) + " --oversubscribe '" + mpi_binary() + "'" + args);
    ASSERT_EQ(many.exit_code, 0) << many.err;
    EXPECT_EQ(many.out, one.out) << "-np " << np;
  }
}

// The study runner's units over ranks: rank 0 writes the checkpoints and the report, every rank
// computes its share of each bootstrap interval's resamples, and the report matches one
// `ncclbot run` byte for byte for any rank count.
TEST(MpiRunUnits, StudyReportMatchesOneProcess) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string study = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/tiny.toml";
  const std::string dir = temp_dir();
  const ShellRun one = run_sh("'" + std::string(NCCLBOT_BINARY) + "' run '" + study + "' --out '" + dir +
                              "/one' --no-figures --threads 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (const char* np : {"2", "3"}) {
    const std::string out = dir + "/many" + np;
    const ShellRun many =
        run_sh("mpirun -np " + std::string(np) + " --oversubscribe '" + mpi_binary() + "' run-units '" +
               study + "' --out '" + out + "' --no-figures --threads 1 --json");
    ASSERT_EQ(many.exit_code, 0) << many.err;
    // Every interval's resamples were split: (2 scenarios + pooled) x 4 policies x 4 statistics.
    EXPECT_EQ(nlohmann::json::parse(many.out)["bootstrap_intervals_split"], 48) << "-np " << np;
    EXPECT_EQ(read_all(out + "/results.json"), read_all(dir + "/one/results.json")) << "-np " << np;
    EXPECT_EQ(read_all(out + "/report.md"), read_all(dir + "/one/report.md")) << "-np " << np;
  }
}

// With --shared-dir every rank checkpoints its own units, so after a rank is killed a rerun
// computes none of the units that rank finished, and the report still matches one process.
TEST(MpiRunUnits, KilledJobResumesFromFinishedUnits) {
  if (!have_mpi()) GTEST_SKIP() << "no ncclbot-mpi in this build or no mpirun on PATH";
  const std::string study = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/tiny.toml";
  const std::string dir = temp_dir();
  const auto job = [&](const std::string& mpirun_flags) {
    return run_sh("mpirun -np 2 " + mpirun_flags + " '" + mpi_binary() + "' run-units '" + study +
                  "' --out '" + dir + "/many' --no-figures --threads 1 --shared-dir --json");
  };
  // Rank 1 dies by SIGKILL after computing its units, before reporting them.
  const ShellRun dead = job("-x NCCLBOT_FAULT_KILL_RANK=1");
  EXPECT_NE(dead.exit_code, 0);
  EXPECT_NE(dead.err.find("rank 1"), std::string::npos) << dead.err;
  const ShellRun rerun = job("");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const auto j = nlohmann::json::parse(rerun.out);
  EXPECT_LT(j["computed"].get<int>(), j["units"].get<int>());  // rank 1's units were kept
  const ShellRun one = run_sh("'" + std::string(NCCLBOT_BINARY) + "' run '" + study + "' --out '" + dir +
                              "/one' --no-figures --threads 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(read_all(dir + "/many/results.json"), read_all(dir + "/one/results.json"));
}
