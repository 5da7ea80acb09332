// How a campaign's runs force their arm. From NCCL 2.31 a set NCCL_ALGO disables every algorithm of
// every function and re-enables only what it names (NVIDIA/nccl src/tuning/cost_model.cc), so a
// plain `NCCL_ALGO=Tree` leaves the other functions nothing to run; `plan` therefore writes each
// run's values for its own collective ("AllReduce:Tree"), and plain values for an earlier NCCL.
// The generated run.sh is run with a program that records the environment it was given.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_cli.hpp"

using namespace ncclbot::test;
namespace fs = std::filesystem;

namespace plan_forcing {

std::string shell_quoted(const std::string& s) {
  return "'" + s + "'";
}

CliResult plan_into(const std::string& camp, const std::string& extra) {
  return run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce,allgather "
      "--arms Ring/LL --max-bytes 4K --iters 2 --json --out " +
      shell_quoted(camp) + " " + extra);
}

// The RUNS line of run `id` in run.sh.
std::string runs_line(const std::string& camp, const std::string& id) {
  std::ifstream in(camp + "/run.sh");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  \"" + id + " ", 0) == 0) return line;
  return "";
}

// Runs run.sh --task `index` with nccl-tests replaced by a program that writes its NCCL_ALGO and
// NCCL_PROTO to DIR/env.txt (and fails, so the run is not complete): what a rank was given.
std::string environment_of_task(const std::string& dir, const std::string& camp, int index) {
  fs::create_directories(dir + "/bin");
  for (const char* name : {"all_reduce_perf", "all_gather_perf"}) {
    const std::string path = dir + "/bin/" + name;
    std::ofstream(path) << "#!/usr/bin/env bash\necho \"NCCL_ALGO=$NCCL_ALGO NCCL_PROTO=$NCCL_PROTO\" > "
                        << shell_quoted(dir) << "/env.txt\nexit 1\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  const std::string launcher = std::string(NCCLBOT_TEST_DATA_DIR) + "/../campaign/standin_launcher.sh";
  const std::string cmd = "NCCL_TESTS_DIR=" + shell_quoted(dir + "/bin") + " SRUN=" + shell_quoted(launcher) +
                          " bash " + shell_quoted(camp + "/run.sh") + " --task " + std::to_string(index) +
                          " >/dev/null 2>&1";
  fs::remove(dir + "/env.txt");
  (void)std::system(cmd.c_str());
  return read_all(dir + "/env.txt");
}

}  // namespace plan_forcing

using plan_forcing::environment_of_task;
using plan_forcing::plan_into;
using plan_forcing::runs_line;
using plan_forcing::shell_quoted;

TEST(PlanForcing, FromNccl231EachRunNamesItsOwnCollective) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  const CliResult plan = plan_into(camp, "");  // the default: NCCL 2.32
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.err.find("forcing for NCCL 2.32: each run names its own collective"), std::string::npos)
      << plan.err;
  EXPECT_EQ(runs_line(camp, "n2-allreduce-ring-ll"),
            "  \"n2-allreduce-ring-ll 2 all_reduce_perf AllReduce:Ring AllReduce:LL 8 0 0 -\"");
  EXPECT_EQ(runs_line(camp, "n2-allgather-ring-ll"),
            "  \"n2-allgather-ring-ll 2 all_gather_perf AllGather:Ring AllGather:LL 256 0 0 -\"");
  EXPECT_NE(read_all(camp + "/campaign.toml").find("\nnccl_version = \"2.32\"\n"), std::string::npos);
  const auto j = nlohmann::json::parse(plan.out);
  EXPECT_EQ(j["runs"][0]["nccl_algo"], "AllReduce:Ring");
  EXPECT_EQ(j["runs"][1]["nccl_proto"], "AllGather:LL");
  EXPECT_EQ(j["forced_per_function"], true);
  // What a rank of each run is given.
  EXPECT_EQ(environment_of_task(dir, camp, 0), "NCCL_ALGO=AllReduce:Ring NCCL_PROTO=AllReduce:LL\n");
  EXPECT_EQ(environment_of_task(dir, camp, 1), "NCCL_ALGO=AllGather:Ring NCCL_PROTO=AllGather:LL\n");
  // The campaign reads back and its runs are still to do.
  const CliResult st = run_cli("plan --status " + shell_quoted(camp));
  EXPECT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("2 runs: 0 done, 0 missing, 2 failed"), std::string::npos) << st.out;
}

TEST(PlanForcing, BeforeNccl231TheValuesArePlain) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  const CliResult plan = plan_into(camp, "--nccl-version 2.30.3");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(runs_line(camp, "n2-allreduce-ring-ll"),
            "  \"n2-allreduce-ring-ll 2 all_reduce_perf Ring LL 8 0 0 -\"");
  EXPECT_EQ(read_all(camp + "/campaign.toml").find("nccl_version"), std::string::npos);
  EXPECT_EQ(environment_of_task(dir, camp, 0), "NCCL_ALGO=Ring NCCL_PROTO=LL\n");
}

TEST(PlanForcing, ANcclVersionThatIsNoneIsOneLine) {
  const CliResult r = plan_into(temp_dir() + "/c", "--nccl-version 2.x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ncclbot: --nccl-version: '2.x' is no NCCL version (MAJOR.MINOR or MAJOR.MINOR.PATCH, like 2.32 "
            "or 2.32.3)\n");
}
