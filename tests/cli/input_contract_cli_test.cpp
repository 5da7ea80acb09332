// The input contract as a user meets it: "above 10%" decided on exact ratios (hand-made times 10.0
// vs 11.0 are exactly 10% apart and do not count), negative sizes refused, and a killed
// `replay --raw` leaves no CSV behind that could pass for a complete one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

// One context; AUTO's prior picks Tree (11 < 12) whose measured time is `tree_us`, the best is Ring
// at 10 us, so AUTO's loss is tree_us / 10 - 1.
std::string sweep_with_tree_at(const std::string& tree_us) {
  return "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
         "test,allreduce,1,8,1024,Ring,LL,0,10,12\n"
         "test,allreduce,1,8,1024,Ring,LL,1,10,12\n"
         "test,allreduce,1,8,1024,Tree,LL,0," +
         tree_us +
         ",11\n"
         "test,allreduce,1,8,1024,Tree,LL,1," +
         tree_us + ",11\n";
}

TEST(InputContractCli, ExactlyTenPercentSlowerIsNotAboveTenPercent) {
  const std::string dir = temp_dir();
  write_file(dir + "/exact.csv", sweep_with_tree_at("11"));
  write_file(dir + "/over.csv", sweep_with_tree_at("11.000001"));
  for (const auto& [file, above] : {std::pair{"exact.csv", 0}, std::pair{"over.csv", 1}}) {
    const CliResult ins = run_cli("inspect '" + dir + "/" + file + "' --json");
    ASSERT_EQ(ins.exit_code, 0) << ins.err;
    const auto j = nlohmann::json::parse(ins.out);
    EXPECT_EQ(j["auto"]["above_10pct"].get<int>(), above) << file;
    // AUTO plays Tree at every step, so the online loss is the same ratio, averaged over 4 steps.
    const CliResult rep =
        run_cli("replay --sweep '" + dir + "/" + file + "' --policy auto --seeds 1 --horizon 4 --json");
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    const auto r = nlohmann::json::parse(rep.out);
    EXPECT_EQ(r["configs"][0]["online"]["above_10pct"].get<int>(), above) << file;
    EXPECT_EQ(r["configs"][0]["final"]["above_10pct"].get<int>(), above) << file;
  }
}

TEST(InputContractCli, NegativeOrWrappedNumbersAreRefused) {
  for (const char* args :
       {"model --fabric h100-ib-a --bytes -1", "model --fabric h100-ib-a --bytes 18446744073709551616",
        "synth --fabric h100-ib-a --seed -1 --out /tmp/never.csv"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  const CliResult ok = run_cli("model --fabric h100-ib-a --bytes 1099511627776 --json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(InputContractCli, KilledReplayLeavesNoRawCsv) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", sweep_with_tree_at("11"));
  const std::string raw = dir + "/raw.csv";
  const std::string sweep = dir + "/s.csv";
  const pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    freopen("/dev/null", "w", stdout);
    execl(NCCLBOT_BINARY, NCCLBOT_BINARY, "replay", "--sweep", sweep.c_str(), "--policy",
          "ucb1:c=0.1|0.2|0.3", "--seeds", "100000", "--horizon", "100000", "--threads", "1", "--raw",
          raw.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the replay finished before it could be killed; make it longer";
  EXPECT_FALSE(fs::exists(raw));
}

TEST(InputContractCli, CompleteReplayWritesItsRawCsvWhole) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", sweep_with_tree_at("11"));
  const CliResult r = run_cli("replay --sweep '" + dir +
                              "/s.csv' --policy auto --policy greedy --seeds 3 --horizon 4 "
                              "--raw '" +
                              dir + "/raw.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_all(dir + "/raw.csv");
  // Header plus 2 configs x 1 context x 3 seeds.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2u);  // s.csv and raw.csv, no temporary
}

}  // namespace
}  // namespace ncclbot::test
