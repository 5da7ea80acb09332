// `ncclbot plugin-check` on the built plugin: for every policy that can run inside NCCL, the
// plugin's decision sequence equals the replay engine's, call for call; a tuner that decides
// differently is caught with the context and step printed and exit code 1; bad usage is exit 2.
// With --ranks, the plugin's leader mode in several processes equals the replay of the leader's
// protocol (--as-deployed leader) on every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "ncclbot/replay/leader_protocol.hpp"

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// A hand-made sweep: 2 collectives x 3 sizes x 2 shapes (`nodes` x `gpus` GPUs per node), 4 arms
// each with a prior that is right on some contexts and wrong on others, 6 samples per arm. Sample
// values are a fixed LCG's output with 3 decimals on even contexts (exact as nanoseconds: the
// profiler path) and 6 on odd ones (the report path), so both feedback paths are exercised.
std::string hand_made_sweep(std::vector<int> shapes = {2, 4}, int gpus = 8) {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  uint64_t lcg = 12345;
  auto next = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return double((lcg >> 33) % 1000000) / 1000000.0;  // [0, 1)
  };
  const char* arms[4][2] = {{"Tree", "LL"}, {"Tree", "Simple"}, {"Ring", "LL128"}, {"Ring", "Simple"}};
  int context = 0;
  for (const char* coll : {"allreduce", "allgather"})
    for (int nodes : shapes)
      for (long bytes : {65536L, 1048576L, 16777216L}) {
        for (int a = 0; a < 4; ++a) {
          const double base = 10.0 + 5.0 * a + double(bytes) / 1e6 * (4 - a);
          const double prior = base * (a == 3 ? 0.8 : 1.1);  // the model flatters Ring/Simple
          for (int r = 0; r < 6; ++r) {
            double x = base * (0.9 + 0.2 * next());
            x = context % 2 ? std::round(x * 1e6) / 1e6 : std::round(x * 1e3) / 1e3;
            char line[256];
            std::snprintf(line, sizeof line, "h,%s,%d,%d,%ld,%s,%s,%d,%.6f,%.3f\n", coll, nodes, gpus, bytes,
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

// The same contexts on one node of 2 GPUs (2-rank communicators: one rank per process with --ranks 2).
std::string pair_sweep_path() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/pair_sweep.csv";
    write_file(p, hand_made_sweep({1}, 2));
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
  check(plugin_path(), "ucb1@conservative", 0, &rc, &err);  // the plugin would run it unwrapped
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("the conservative wrapper runs in the CPU replay engines only"), std::string::npos)
      << err;
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
  ASSERT_NE(read_all(dir + "/s.sweep.toml").find("[dynamics]"), std::string::npos);
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

// A knob sweep (synth --knobs): the plugin's knob mode, set per context to the context's own lists,
// runs the replay's arm on every call, its channels read from nChannels and its chunk from v6
// getChunkSize, for the structured learner, a flat one, a randomised one and one kept to NCCL's own
// knobs, with and without delayed feedback. Another seed for the plugin is caught, with the knob arms
// named. The decision log it writes holds every call as a knob call, and telemetry reads it.
TEST(PluginCheckCli, AKnobSweepMatchesTheReplayCallForCall) {
  const std::string dir = temp_dir(), sweep = dir + "/knobs.csv";
  const CliResult s =
      run_cli("synth --fabric h100-ib-a --seed 2 --out '" + sweep +
              "' --nodes 2 --collectives allreduce --samples 5 --knobs 'channels=0,4,8;chunk=0,128K'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string base = "plugin-check --plugin '" + plugin_path() + "' --sweep '" + sweep + "' --seed 4 ";
  for (const char* policy : {"osub", "ucb1", "thompson", "ucb1@slots"})
    for (const char* delay : {"0", "3"}) {
      const CliResult r =
          run_cli(base + "--policy '" + policy + "' --horizon 250 --delay " + delay + " --json");
      ASSERT_EQ(r.exit_code, 0) << policy << " delay " << delay << "\n" << r.out << r.err;
      const nlohmann::json j = nlohmann::json::parse(r.out);
      EXPECT_TRUE(j["equal"].get<bool>()) << r.out;
      EXPECT_EQ(j["skipped"].get<int>(), 0) << r.err;
      EXPECT_EQ(j["decisions"].get<int>(), j["contexts"].get<int>() * 250) << r.out;
    }
  const CliResult other =
      run_cli(base + "--policy thompson --horizon 250 --plugin-env NCCLBOT_SEED=9 --json");
  EXPECT_EQ(other.exit_code, 1) << other.err;
  const nlohmann::json j = nlohmann::json::parse(other.out);
  ASSERT_FALSE(j["mismatches"].empty()) << other.out;
  EXPECT_NE(j["mismatches"][0]["replay"].get<std::string>().find("channels"), std::string::npos) << other.out;
  const CliResult log = run_cli(base + "--policy ucb1 --horizon 250 --log '" + dir + "/k.log'");
  ASSERT_EQ(log.exit_code, 0) << log.err;
  const CliResult tel = run_cli("telemetry '" + dir + "/k.log' --out '" + dir + "/tel' --resamples 99");
  ASSERT_EQ(tel.exit_code, 0) << tel.err;
  const nlohmann::json t = nlohmann::json::parse(read_all(dir + "/tel/telemetry.json"));
  EXPECT_EQ(t["calls"].get<int>(), j["contexts"].get<int>() * 250) << t.dump();
  EXPECT_EQ(t["knob_calls"].get<int>(), t["calls"].get<int>());
}

// Leader mode as a job runs it: the real plugin in 2 or 3 processes on loopback, the communicator's
// ranks (nodes x GPUs per node) held between them, in lockstep. Every rank's every decision equals
// the replay of the leader's protocol: NCCL's pick on calls 0..11, the policy from call 12 with its
// Philox steps counted from there, latencies on the (8, 4) schedule. (The plugin of before the fixed
// start, which began the policy at call 1 in 2-rank communicators, fails the pair sweep.)
namespace {

nlohmann::json check_ranks(const std::string& sweep, int ranks, const std::string& policy,
                           const std::string& extra, int* exit_code, std::string* err) {
  const CliResult r =
      run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + sweep + "' --policy '" + policy +
              "' --seed 3 --horizon 150 --ranks " + std::to_string(ranks) + " " + extra + " --json");
  *exit_code = r.exit_code;
  *err = r.err;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out);
}

// Policies that leave NCCL's pick on these sweeps within 150 calls (a more cautious one may not,
// and would then check nothing past NCCL's own choices).
const char* const kExploring[] = {"ucb1:c=0.5,n0=2", "thompson:n0=1,sigma=0.3"};

}  // namespace

TEST(PluginCheckCli, LeaderModeInSeveralProcessesMatchesTheAsDeployedReplayOnEveryRank) {
  struct Case {
    std::string sweep;
    int ranks, contexts, comm_ranks;  // comm_ranks summed over the contexts
  };
  const Case cases[] = {{pair_sweep_path(), 2, 6, 6 * 2},         // one rank per process
                        {sweep_path(), 3, 12, 6 * 16 + 6 * 32}};  // up to 16 ranks per process
  for (const Case& c : cases)
    for (const char* policy : kExploring) {
      int rc = -1;
      std::string err;
      nlohmann::json j = check_ranks(c.sweep, c.ranks, policy, "", &rc, &err);
      EXPECT_EQ(rc, 0) << policy << " --ranks " << c.ranks << "\n" << err;
      ASSERT_TRUE(j.is_object()) << policy << "\n" << err;
      EXPECT_TRUE(j["equal"].get<bool>()) << policy << " --ranks " << c.ranks << "\n" << err;
      EXPECT_EQ(j["ranks"].get<int>(), c.ranks);
      EXPECT_EQ(j["contexts"].get<int>(), c.contexts);
      EXPECT_EQ(j["decisions"].get<int>(), c.comm_ranks * 150) << policy;
      EXPECT_EQ(j["via_report"].get<int>(), c.contexts * 150) << policy;
      EXPECT_EQ(j["rank_disagreements"].get<int>(), 0) << policy;
      EXPECT_TRUE(j["mismatches"].empty()) << policy;
      // Not vacuous: the replay's policy leaves NCCL's pick, so a plugin playing NCCL's own choice
      // throughout differs, on every rank, after the first 12 calls (which both play).
      j = check_ranks(c.sweep, c.ranks, policy, "--plugin-env NCCLBOT_POLICY=auto", &rc, &err);
      EXPECT_EQ(rc, 1) << policy << "\n" << err;
      ASSERT_TRUE(j.is_object()) << policy << "\n" << err;
      EXPECT_FALSE(j["equal"].get<bool>()) << policy;
      ASSERT_FALSE(j["mismatches"].empty()) << policy;
      std::set<int> ranks;
      for (const auto& m : j["mismatches"]) {
        ranks.insert(m["rank"].get<int>());
        EXPECT_GE(m["step"].get<int>(), ncclbot::kLeaderStart) << policy << " " << m.dump();
      }
      EXPECT_EQ(ranks.size(), size_t(c.sweep == sweep_path() ? 32 : 2)) << policy;
    }
}

// A plugin set up otherwise than --policy says is caught, with context, ranks and step.
TEST(PluginCheckCli, LeaderModeCatchesAPluginThatDecidesOtherwise) {
  int rc = -1;
  std::string err;
  nlohmann::json j = check_ranks(pair_sweep_path(), 2, kExploring[0],
                                 "--plugin-env NCCLBOT_POLICY=ucb1:c=0.1,n0=2", &rc, &err);
  EXPECT_EQ(rc, 1) << err;
  ASSERT_TRUE(j.is_object()) << err;
  EXPECT_FALSE(j["equal"].get<bool>());
  ASSERT_FALSE(j["mismatches"].empty());
  EXPECT_EQ(j["rank_disagreements"].get<int>(), 0);  // the ranks still agree with each other
  EXPECT_NE(err.find("MISMATCH context"), std::string::npos) << err;
  EXPECT_NE(err.find("ranks 0..1 step"), std::string::npos) << err;
  // Another seed in the plugin than in the replay.
  j = check_ranks(sweep_path(), 3, kExploring[1], "--plugin-env NCCLBOT_SEED=4", &rc, &err);
  EXPECT_EQ(rc, 1) << err;
  ASSERT_TRUE(j.is_object()) << err;
  EXPECT_FALSE(j["equal"].get<bool>());
  EXPECT_FALSE(j["mismatches"].empty());
}

// Leader mode over knob arms: the leader decides whole arms (algorithm, protocol, channels, chunk)
// and every rank plays them, the followers' chunk from getChunkSize too; the leader credits its
// latencies to the arm that ran with the chunk it handed NCCL. Every rank's every call equals the
// replay of the leader's protocol over the knob arms, for the structured, a flat, a randomised
// learner and one kept to NCCL's own knobs. Not vacuous: NCCL's own choices throughout, or a
// plugin crossing other lists, differ.
TEST(PluginCheckCli, LeaderModeOverKnobArmsMatchesTheAsDeployedReplayOnEveryRank) {
  const std::string dir = temp_dir(), sweep = dir + "/knobs.csv";
  const CliResult s =
      run_cli("synth --fabric h100-ib-a --seed 2 --out '" + sweep +
              "' --nodes 2 --collectives allreduce --samples 5 --knobs 'channels=0,4,8;chunk=0,128K'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  for (const char* policy : {"osub", "ucb1", "thompson", "ucb1@slots"}) {
    int rc = -1;
    std::string err;
    const nlohmann::json j = check_ranks(sweep, 3, policy, "", &rc, &err);
    ASSERT_EQ(rc, 0) << policy << "\n" << err;
    EXPECT_TRUE(j["equal"].get<bool>()) << policy << "\n" << err;
    EXPECT_EQ(j["skipped"].get<int>(), 0) << err;
    EXPECT_EQ(j["decisions"].get<int>(), j["contexts"].get<int>() * 16 * 150) << policy;  // 2x8 ranks each
    EXPECT_EQ(j["rank_disagreements"].get<int>(), 0) << policy;
  }
  for (const char* other : {"NCCLBOT_POLICY=auto", "NCCLBOT_KNOBS='channels=0,4,8;chunk=0'"}) {
    int rc = -1;
    std::string err;
    const nlohmann::json j = check_ranks(sweep, 3, "ucb1", std::string("--plugin-env ") + other, &rc, &err);
    EXPECT_EQ(rc, 1) << other << "\n" << err;
    ASSERT_TRUE(j.is_object()) << err;
    EXPECT_FALSE(j["equal"].get<bool>()) << other;
  }
}

TEST(PluginCheckCli, LeaderModeBadUsageExitsTwo) {
  int rc = -1;
  std::string err;
  check_ranks(pair_sweep_path(), 2, "ucb1", "--delay 3", &rc, &err);
  EXPECT_EQ(rc, 2) << err;
  check_ranks(pair_sweep_path(), 65, "ucb1", "", &rc, &err);
  EXPECT_EQ(rc, 2) << err;
  check_ranks(pair_sweep_path(), 2, "ucb1", "--feed profiler", &rc, &err);
  EXPECT_EQ(rc, 2) << err;
  check_ranks(pair_sweep_path(), 2, "ucb1", "--plugin-env NOVALUE", &rc, &err);
  EXPECT_EQ(rc, 2) << err;
  // A tuner without ncclbotReportLatency cannot be told the leader's latencies.
  const CliResult r =
      run_cli("plugin-check --plugin '" + beside_ncclbot("libnccl-tuner-fixedring-fixture.so") +
              "' --sweep '" + pair_sweep_path() + "' --policy ucb1 --ranks 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ncclbotReportLatency"), std::string::npos) << r.err;
}
