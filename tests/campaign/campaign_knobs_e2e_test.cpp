// A channel campaign with no cluster: plan two knob points of one arm (NCCL's own channels and 8),
// run.sh runs them with the stand-in nccl-tests (which records its environment in the -J JSON and,
// under NCCL_DEBUG=INFO, prints NCCL's "N coll channels" line with NCCL_MAX_CTAS's count), and
// plan --status says both are done; a run where NCCL set up another count is failed, naming the line.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

std::string in_quotes(const std::string& s) {
  return "'" + s + "'";
}

// A campaign of Ring/Simple all-reduce on 2 nodes x 8 GPUs at channels {NCCL's, 8}, with the
// stand-in as DIR/bin/all_reduce_perf; returns the variables run.sh needs.
std::string plan_channel_campaign(const std::string& dir, const std::string& camp) {
  fs::create_directories(dir + "/bin");
  fs::create_symlink(beside_ncclbot("nccl_tests_standin"), dir + "/bin/all_reduce_perf");
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce --arms Ring/Simple "
      "--channels 0,8 --min-bytes 1K --max-bytes 4K --iters 2 --out " +
      in_quotes(camp));
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  return "NCCL_TESTS_DIR=" + in_quotes(dir + "/bin") +
         " SRUN=" + in_quotes(std::string(NCCLBOT_TEST_DATA_DIR) + "/../campaign/standin_launcher.sh") +
         " NCCLBOT_STANDIN_FABRIC=h100-ib-a ";
}

nlohmann::json status_json(const std::string& camp) {
  const CliResult r = run_cli("plan --status " + in_quotes(camp) + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CampaignKnobsEndToEnd, ChannelRunsAreDoneWhenNcclSetUpTheirCount) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  const std::string vars = plan_channel_campaign(dir, camp);
  const CliResult run = run_cli_with("/usr/bin/env", vars + "bash " + in_quotes(camp + "/run.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json s = status_json(camp);
  EXPECT_EQ(s["done"], 2) << s.dump(2);
  ASSERT_EQ(s["runs"].size(), 2u);
  EXPECT_EQ(s["runs"][1]["id"], "n2-allreduce-ring-simple-ch8");
  EXPECT_NE(read_all(camp + "/logs/n2-allreduce-ring-simple-ch8.log").find("NCCL INFO 8 coll channels,"),
            std::string::npos);
  EXPECT_EQ(read_all(camp + "/logs/n2-allreduce-ring-simple.log").find("coll channels"), std::string::npos);
  // Ingest: each point its own arm, with the knob columns (sizes 1, 2, 4 KiB x 2 points x 2 iterations).
  const CliResult ingest = run_cli("ingest " + in_quotes(camp));
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  const std::string csv = read_all(camp + "/sweep.csv");
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us");
  EXPECT_EQ(count_of(csv, "\nh100-ib-a,AllReduce,2,8,"), 12u) << csv;
  EXPECT_EQ(count_of(csv, ",Ring,Simple,8,0,"), 6u) << csv;
  EXPECT_EQ(count_of(csv, ",Ring,Simple,0,0,"), 6u) << csv;

  // The same point run again where NCCL sets up 4 channels: failed, naming the log's line.
  for (const char* ext : {".log", ".json"}) fs::remove(camp + "/logs/n2-allreduce-ring-simple-ch8" + ext);
  run_cli_with("/usr/bin/env", vars + "NCCLBOT_STANDIN_CHANNELS=4 bash " + in_quotes(camp + "/run.sh"));
  const nlohmann::json again = status_json(camp);
  EXPECT_EQ(again["runs"][1]["state"], "failed");
  const std::string reason = again["runs"][1]["reason"];
  EXPECT_EQ(
      reason.rfind("NCCL set up 4 coll channels (" + camp + "/logs/n2-allreduce-ring-simple-ch8.log:", 0), 0u)
      << reason;
  EXPECT_NE(reason.find("), planned 8"), std::string::npos) << reason;
}

}  // namespace
}  // namespace ncclbot::test
