// MPI ranks on the CUDA backend: `mpirun -np 2 ncclbot-mpi replay --backend cuda` (and `tune`)
// print what one process prints on the CPU backend, but for the backend's name. Both ranks use
// device 0 of the node (one GPU is enough; scripts/gpu-per-local-rank.sh spreads ranks over
// several). Skips when there is no usable CUDA device, no mpirun or no ncclbot-mpi beside ncclbot.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpu/random_sweep.hpp"
#include "gpu/skip_without_gpu.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;

namespace {

std::string mpi_binary() {
  return (std::filesystem::path(test::ncclbot_binary()).parent_path() / "ncclbot-mpi").string();
}

#define SKIP_WITHOUT_GPU_OR_MPI()                                                                \
  do {                                                                                           \
    NCCLBOT_SKIP_WITHOUT_GPU();                                                                  \
    if (std::system("command -v mpirun >/dev/null 2>&1") != 0)                                   \
      NCCLBOT_SKIP_BECAUSE("no_mpirun", "no mpirun on PATH");                                    \
    if (!std::filesystem::exists(mpi_binary()))                                                  \
      NCCLBOT_SKIP_BECAUSE("no_ncclbot_mpi", "no ncclbot-mpi beside ncclbot: " << mpi_binary()); \
  } while (0)

// mpirun refuses root unless told; GPU machines often run tests as root in a container.
test::CliResult run_mpi(const std::string& args) {
  const std::string dir = test::temp_dir();
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe '" +
      mpi_binary() + "' " + args + " >'" + dir + "/out' 2>'" + dir + "/err' </dev/null";
  const int status = std::system(cmd.c_str());
  test::CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = test::read_all(dir + "/out");
  r.err = test::read_all(dir + "/err");
  return r;
}

// `args` + "cpu" in one process and `args` + "cuda" over two ranks print the same JSON document
// but for "backend".
void expect_ranks_on_cuda_match_cpu(const std::string& args) {
  const auto cpu = test::run_cli(args + "cpu");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const auto ranks = run_mpi(args + "cuda");
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  auto jc = nlohmann::json::parse(cpu.out), jg = nlohmann::json::parse(ranks.out);
  EXPECT_EQ(jc["backend"], "cpu");
  EXPECT_EQ(jg["backend"], "cuda");
  jc.erase("backend");
  jg.erase("backend");
  EXPECT_EQ(jg.dump(), jc.dump());
}

}  // namespace

TEST(MpiCuda, ReplayOverTwoRanksMatchesOneCpuProcess) {
  SKIP_WITHOUT_GPU_OR_MPI();
  const std::string dir = test::temp_dir();
  write_sweep_csv(test::random_sweep(7, 60, 4), dir + "/s.csv");
  expect_ranks_on_cuda_match_cpu(
      "replay --sweep '" + dir + "/s.csv' --policy 'ucb1:c=0.1|0.4,n0=0|2' --policy " +
      "'thompson:n0=1' --policy egreedy --seeds 4 --horizon 200 --json --backend ");
}

TEST(MpiCuda, TuneOverTwoRanksMatchesOneCpuProcess) {
  SKIP_WITHOUT_GPU_OR_MPI();
  const std::string dir = test::temp_dir();
  write_sweep_csv(test::random_sweep(8, 60, 4), dir + "/s.csv");
  expect_ranks_on_cuda_match_cpu(
      "tune --sweep '" + dir + "/s.csv' --policy 'ucb1:c=0.1|0.4,n0=0|2' --policy " +
      "'thompson:sigma=0.05|0.2' --tune-nodes 1,2,4 --score-nodes 8,16,32 --seeds 3 " +
      "--horizon 150 --json --backend ");
}
