// `ncclbot plugin-check` on the built plugin: for every policy that can run inside NCCL, the
// plugin's decision sequence equals the replay engine's, call for call; a tuner that decides
// differently is caught with the context and step printed and exit code 1; bad usage is exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// A hand-made sweep: 2 collectives x 3 sizes x 2 shapes, 4 arms each with a prior that is right on
// some contexts and wrong on others, 6 samples per arm. Sample values are a fixed LCG's output
// with 3 decimals on even contexts (exact as nanoseconds: the profiler path) and 6 on odd ones
// (the report path), so both feedback paths are exercised.
std::string hand_made_sweep() {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  uint64_t lcg = 12345;
  auto next = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return double((lcg >> 33) % 1000000) / 1000000.0;  // [0, 1)
  };
  const char* arms[4][2] = {{"Tree", "LL"}, {"Tree", "Simple"}, {"Ring", "LL128"}, {"Ring", "Simple"}};
  int context = 0;
  for (const char* coll : {"allreduce", "allgather"})
    for (int nodes : {2, 4})
      for (long bytes : {65536L, 1048576L, 16777216L}) {
        for (int a = 0; a < 4; ++a) {
          const double base = 10.0 + 5.0 * a + double(bytes) / 1e6 * (4 - a);
          const double prior = base * (a == 3 ? 0.8 : 1.1);  // the model flatters Ring/Simple
          for (int r = 0; r < 6; ++r) {
            double x = base * (0.9 + 0.2 * next());
            x = context % 2 ? std::round(x * 1e6) / 1e6 : std::round(x * 1e3) / 1e3;
            char line[256];
            std::snprintf(line, sizeof line, "h,%s,%d,8,%ld,%s,%s,%d,%.6f,%.3f\n", coll, nodes, bytes,
                          arms[a][0], arms[a][1], r, x, prior);
            csv += line;
          }
        }
        ++context;
      }
  return csv;
}

std::string sweep_path() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/hand_made_sweep.csv";
    write_file(p, hand_made_sweep());
    return p;
  }();
  return path;
}

nlohmann::json check(const std::string& plugin, const std::string& policy, int seed, int* exit_code,
                     std::string* err = nullptr, int delay = 0) {
  const CliResult r = run_cli("plugin-check --plugin '" + plugin + "' --sweep '" + sweep_path() +
                              "' --policy '" + policy + "' --seed " + std::to_string(seed) +
                              " --horizon 150 --delay " + std::to_string(delay) + " --json");
  *exit_code = r.exit_code;
  if (err) *err = r.err;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out);
}

}  // namespace

TEST(PluginCheckCli, EveryLivePolicyMatchesTheReplayCallForCall) {
  const char* policies[] = {"auto",
                            "random",
                            "greedy:n0=0",
                            "greedy:n0=4",
                            "egreedy:eps=0.2,decay=0.01,n0=1",
                            "ucb1:c=0.5,n0=8",
                            "ucb1:c=0.1,n0=0",
                            "thompson:n0=1,sigma=0.1",
                            "etc:m=3",
                            "swucb:c=0.3,window=20,n0=2"};
  for (const char* policy : policies)
    for (int seed : {0, 11}) {
      int rc = -1;
      std::string err;
      const nlohmann::json j = check(plugin_path(), policy, seed, &rc, &err);
      EXPECT_EQ(rc, 0) << policy << " seed " << seed << "\n" << err;
      ASSERT_TRUE(j.is_object()) << policy << "\n" << err;
      EXPECT_TRUE(j["equal"].get<bool>()) << policy;
      EXPECT_EQ(j["contexts"].get<int>(), 12) << policy;
      EXPECT_EQ(j["decisions"].get<int>(), 12 * 150) << policy;
      // Both feedback paths were used (even contexts are exact in nanoseconds).
      EXPECT_GT(j["via_profiler"].get<int>(), 0) << policy;
      EXPECT_GT(j["via_report"].get<int>(), 0) << policy;
    }
}

// Delayed feedback (replay/replay.hpp): the real plugin is told each call's latency only after the
// next D calls were decided, as NCCL's profiler would deliver it, and still decides as the replay
// with --delay D does.
TEST(PluginCheckCli, DelayedFeedbackStillMatchesTheReplayCallForCall) {
  for (const char* policy :
       {"greedy:n0=0", "egreedy:eps=0.2,n0=1", "ucb1:c=0.5,n0=0", "thompson:n0=1,sigma=0.1", "etc:m=2",
        "swucb:c=0.3,window=20,n0=2", "ducb:c=0.3,gamma=0.9,n0=1"})
    for (int delay : {1, 9}) {
      int rc = -1;
      std::string err;
      const nlohmann::json j = check(plugin_path(), policy, 5, &rc, &err, delay);
      EXPECT_EQ(rc, 0) << policy << " delay " << delay << "\n" << err;
      ASSERT_TRUE(j.is_object()) << policy << "\n" << err;
      EXPECT_TRUE(j["equal"].get<bool>()) << policy << " delay " << delay;
      EXPECT_EQ(j["delay"].get<int>(), delay);
      EXPECT_EQ(j["decisions"].get<int>(), 12 * 150) << policy;
    }
}

TEST(PluginCheckCli, ADifferentTunerIsCaughtWithContextAndStep) {
  const std::string wrong = beside_ncclbot("libnccl-tuner-fixedring-fixture.so");
  int rc = -1;
  std::string err;
  const nlohmann::json j = check(wrong, "greedy:n0=0", 0, &rc, &err);
  EXPECT_EQ(rc, 1);
  ASSERT_TRUE(j.is_object()) << err;
  EXPECT_FALSE(j["equal"].get<bool>());
  ASSERT_FALSE(j["mismatches"].empty());
  // greedy with n0 = 0 plays Tree/LL (the lowest slot, untried) first; the fixture plays Ring/Simple.
  EXPECT_EQ(j["mismatches"][0]["step"].get<int>(), 0);
  EXPECT_EQ(j["mismatches"][0]["plugin"].get<std::string>(), "Ring/Simple");
  EXPECT_EQ(j["mismatches"][0]["replay"].get<std::string>(), "Tree/LL");
  EXPECT_NE(err.find("MISMATCH context 0"), std::string::npos) << err;
  EXPECT_NE(err.find("step 0"), std::string::npos) << err;
}

TEST(PluginCheckCli, BadUsageExitsTwo) {
  int rc = -1;
  std::string err;
  check("/nonexistent/libnccl-tuner-ncclbot.so", "ucb1", 0, &rc, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("cannot load"), std::string::npos) << err;
  check(plugin_path(), "oracle", 0, &rc, &err);
  EXPECT_EQ(rc, 2);
  check(plugin_path(), "ucb1:c=0.1|0.2", 0, &rc, &err);
  EXPECT_EQ(rc, 2);
  const std::string no_prior = temp_dir() + "/no_prior.csv";
  write_file(no_prior,
             "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\nh,allreduce,1,8,1024,"
             "Ring,LL,0,5.0\n");
  const CliResult r = run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + no_prior +
                              "' --policy ucb1 --seed 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no_prior.csv"), std::string::npos) << r.err;
}

TEST(PluginCheckCli, SimulatedSweepWhenSynthIsAvailable) {
  const std::string dir = temp_dir();
  const CliResult s = run_cli("synth --fabric h100-ib-a --seed 1 --out '" + dir +
                              "/s.csv' --nodes 2,4 --collectives allreduce,allgather --samples 8");
  if (s.exit_code != 0) GTEST_SKIP() << "ncclbot synth not available in this build: " << s.err;
  // A simulated sweep carries call dynamics (warm-up, level shifts, first-use cost): the plugin is
  // fed the latencies the replay core observed, with and without delayed feedback.
  ASSERT_EQ(read_all(dir + "/s.csv").rfind("# dynamics:", 0), 0u);
  for (const char* policy : {"ucb1:c=0.5,n0=8", "thompson:n0=1,sigma=0.1", "egreedy:eps=0.1,n0=1"})
    for (const char* delay : {"0", "5"}) {
      const CliResult r =
          run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + dir + "/s.csv' --policy '" +
                  policy + "' --seed 5 --horizon 300 --delay " + delay + " --json");
      EXPECT_EQ(r.exit_code, 0) << policy << " delay " << delay << "\n" << r.out << r.err;
      EXPECT_NE(r.out.find("\"equal\":true"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("\"decisions\":"), std::string::npos) << r.out;
    }
}
