// `--backend` on a machine without a usable CUDA device (CI): `cuda` fails with one clear line and
// exit code 2, `auto` falls back to the CPU, says so on stderr and reports "cpu". On a machine with
// a GPU these are skipped; tests/gpu covers that case.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ncclbot/core/cuda_probe.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

const char* kSweep =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
    "f,allreduce,1,8,1024,Ring,LL,0,9,5\n"
    "f,allreduce,1,8,1024,Ring,LL,1,11,5\n"
    "f,allreduce,1,8,1024,Tree,LL,0,20,6\n"
    "f,allreduce,1,8,1024,Tree,LL,1,20,6\n";

std::string replay_args(const std::string& dir, const std::string& backend) {
  return "replay --sweep '" + dir + "/s.csv' --policy ucb1 --seeds 2 --horizon 10 --json --backend " +
         backend;
}

}  // namespace

TEST(CudaBackendCli, CudaWithoutDeviceIsOneLineExitTwo) {
  if (ncclbot::probe_cuda().usable_devices > 0) GTEST_SKIP() << "a CUDA device is usable here";
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kSweep);
  const auto r = run_cli(replay_args(dir, "cuda"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.signal, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no usable CUDA device"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CudaBackendCli, AutoFallsBackToCpuAndSaysSo) {
  if (ncclbot::probe_cuda().usable_devices > 0) GTEST_SKIP() << "a CUDA device is usable here";
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kSweep);
  const auto r = run_cli(replay_args(dir, "auto"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("replaying on the CPU"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["backend"], "cpu");
  const auto cpu = run_cli(replay_args(dir, "cpu"));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_EQ(cpu.out, r.out);
}

TEST(CudaBackendCli, TuneAndBenchRefuseCudaWithoutDevice) {
  if (ncclbot::probe_cuda().usable_devices > 0) GTEST_SKIP() << "a CUDA device is usable here";
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kSweep);
  const auto tune = run_cli("tune --sweep '" + dir + "/s.csv' --policy ucb1 --tune-nodes 1 --score-nodes 1 " +
                            "--seeds 1 --horizon 5 --json --backend cuda");
  EXPECT_EQ(tune.exit_code, 2) << tune.err;
  EXPECT_NE(tune.err.find("no usable CUDA device"), std::string::npos) << tune.err;
  const auto bench =
      run_cli("bench --backend cuda --policy ucb1 --arms 12 --contexts 2 --seeds 1 --horizon 8 --json");
  EXPECT_EQ(bench.exit_code, 2) << bench.err;
  EXPECT_NE(bench.err.find("no usable CUDA device"), std::string::npos) << bench.err;
}
