// Scoring as deployed (deployed/deployed_cost.hpp): every policy the plugin can run has a measured
// per-call cost, stock NCCL and the oracle are free, supervised selectors pay table mode's cost,
// and the measured leader delay is what the plugin's window protocol allows
// (tests/plugin/feedback_delay_test.cpp derives that range by hand: median in [127, 255]).
#include "ncclbot/deployed/deployed_cost.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "ncclbot/core/error.hpp"

using namespace ncclbot;

namespace {

std::vector<PolicyKind> registry_kinds() {
  std::vector<PolicyKind> out;
#define NCCLBOT_TEST_KIND(Kind, ...) out.push_back(PolicyKind::Kind);
  NCCLBOT_POLICIES(NCCLBOT_TEST_KIND)
#undef NCCLBOT_TEST_KIND
  return out;
}

}  // namespace

TEST(DeployedCost, EveryRegisteredPolicyHasAMeasuredCost) {
  for (PolicyKind kind : registry_kinds()) {
    const PolicyConfig cfg = default_policy_config(kind);
    const double us = deployed_call_cost_us(cfg);
    EXPECT_TRUE(std::isfinite(us)) << policy_name(kind);
    if (kind == PolicyKind::kAuto || kind == PolicyKind::kOracle) {
      EXPECT_EQ(us, 0.0) << policy_name(kind);
    } else {
      // A live getCollInfo takes tens to hundreds of nanoseconds, never nothing and never a microsecond.
      EXPECT_GT(us, 0.001) << policy_name(kind);
      EXPECT_LT(us, 1.0) << policy_name(kind);
    }
  }
}

TEST(DeployedCost, SupervisedSelectorsPayTableMode) {
  const double knn = deployed_call_cost_us(default_policy_config(PolicyKind::kKnn));
  EXPECT_EQ(knn, deployed_call_cost_us(default_policy_config(PolicyKind::kTree)));
  EXPECT_GT(knn, 0.0);
}

TEST(DeployedCost, CostsFollowTheConfigs) {
  const std::vector<PolicySpec> configs = {parse_policy_spec("auto"), parse_policy_spec("ucb1:c=0.2,n0=4"),
                                           parse_policy_spec("thompson")};
  const std::vector<double> costs = deployed_call_costs(configs);
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(costs[0], 0.0);
  EXPECT_EQ(costs[1], deployed_call_cost_us(configs[1].config));
  EXPECT_EQ(costs[2], deployed_call_cost_us(configs[2].config));
}

TEST(DeployedCost, ModesAndTheirDelays) {
  EXPECT_EQ(parse_deployment("local"), Deployment::kLocal);
  EXPECT_EQ(parse_deployment("leader"), Deployment::kLeader);
  EXPECT_EQ(deployment_name(Deployment::kLeader), "leader");
  EXPECT_EQ(deployment_name(Deployment::kLocal), "local");
  EXPECT_THROW(parse_deployment("Leader"), UsageError);
  EXPECT_THROW(parse_deployment(""), UsageError);
  // Local: every call after the previous call's latency. Leader: the protocol of
  // replay/leader_protocol.hpp, windows of 4 calls asked for 8 calls ahead (docs/plugin.md
  // "Decision windows"), so a decision lags 8..11 calls behind the latencies.
  EXPECT_EQ(deployed_delay(Deployment::kLocal), 0);
  EXPECT_EQ(deployed_feedback(Deployment::kLocal).window, 1);
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).delay, 8);
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).window, 4);
  // Three windows of NCCL's own: the follower asks for calls 0..8 at its call 0, windows 0..2.
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).policy_start, 12);
  EXPECT_EQ(deployed_feedback(Deployment::kLocal).policy_start, 0);
  EXPECT_EQ(deployed_delay(Deployment::kLeader), 8);
}

// The costs come from data/plugin_call_costs.csv (what plugin_overhead_bench --write-costs writes),
// compiled in: each of its rows is what deployed_call_cost_us charges, in microseconds.
TEST(DeployedCost, TheChargedCostsAreTheDataFilesRows) {
  const std::string path = std::string(NCCLBOT_SOURCE_DIR) + "/data/plugin_call_costs.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int rows = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line == "policy,ns_per_call") continue;
    const std::string name = line.substr(0, line.find(','));
    const double ns = std::stod(line.substr(line.find(',') + 1));
    const PolicyConfig cfg =
        default_policy_config(name == "table" ? PolicyKind::kKnn : *policy_kind_named(name));
    EXPECT_EQ(deployed_call_cost_us(cfg), ns / 1000.0) << line;
    ++rows;
  }
  EXPECT_EQ(size_t(rows), parse_call_costs(text, path).size());
  // Table mode and every live policy but AUTO (stock NCCL needs no plugin).
  EXPECT_EQ(size_t(rows), live_policies().size());
}

TEST(DeployedCost, ABadCostsFileIsRefusedWithItsLine) {
  const auto line_of_error = [](const std::string& text) -> long {
    try {
      parse_call_costs(text, "costs.csv");
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "costs.csv");
      return e.line();
    }
    return -1;
  };
  EXPECT_EQ(parse_call_costs("# a note\npolicy,ns_per_call\nucb1,43.1\ntable,56.2\n", "c.csv").size(), 2u);
  EXPECT_EQ(line_of_error("policy,ns\n"), 1);                             // another header
  EXPECT_EQ(line_of_error("# x\npolicy,ns_per_call\nucb1\n"), 3);         // no number
  EXPECT_EQ(line_of_error("policy,ns_per_call\nucb1,fast\n"), 2);         // not a number
  EXPECT_EQ(line_of_error("policy,ns_per_call\nucb1,-3\n"), 2);           // not positive
  EXPECT_EQ(line_of_error("policy,ns_per_call\nucb1,nan\n"), 2);          // not finite
  EXPECT_EQ(line_of_error("policy,ns_per_call\nucb,4\n"), 2);             // no such policy
  EXPECT_EQ(line_of_error("policy,ns_per_call\nucb1,4\n\nucb1,5\n"), 4);  // twice
  EXPECT_EQ(line_of_error("# only a comment\n"), 0);                      // no header at all
}

#ifdef NCCLBOT_OVERHEAD_BENCH
// What the benchmark writes is what the library reads: a short run of plugin_overhead_bench
// --write-costs gives table mode and every live policy but AUTO, each a positive cost.
TEST(DeployedCost, TheOverheadBenchWritesAFileTheLibraryReads) {
  const std::string path = testing::TempDir() + "ncclbot_call_costs.csv";
  const std::string cmd = std::string(NCCLBOT_OVERHEAD_BENCH) + " " + NCCLBOT_TUNER_PLUGIN +
                          " 2000 1 --write-costs " + path + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<MeasuredCallCost> costs = parse_call_costs(text, path);
  std::vector<std::string> expected = {"table"};
  for (PolicyKind kind : live_policies())
    if (kind != PolicyKind::kAuto) expected.emplace_back(policy_name(kind));
  std::vector<std::string> names;
  for (const MeasuredCallCost& c : costs) names.push_back(c.policy);
  EXPECT_EQ(names, expected);
  std::remove(path.c_str());
}

// --only NAME times that policy's cases alone: in knob mode twice, with and without the getChunkSize
// NCCL makes after getCollInfo. A name no live policy has, or --only with --write-costs (which needs
// every case), exits 2.
TEST(DeployedCost, TheOverheadBenchTimesOnePolicyWhenAsked) {
  const std::string bench = std::string(NCCLBOT_OVERHEAD_BENCH) + " " + NCCLBOT_TUNER_PLUGIN + " 200 1 ";
  const std::string out_path = testing::TempDir() + "ncclbot_overhead_only.json";
  const std::string cmd = bench + "--knobs 'channels=0,4;chunk=0,64K' --only osub >" + out_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out_path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"policy\": \""), 3u) << json;  // slot mode, then knob mode twice
  EXPECT_EQ(count("\"policy\": \"osub:"), 3u) << json;
  EXPECT_EQ(count("\"timed\": \"getCollInfo+pick+getChunkSize\""), 1u) << json;
  EXPECT_EQ(count("\"timed\": \"getCollInfo\""), 2u) << json;
  std::remove(out_path.c_str());
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--only nosuch >/dev/null 2>&1").c_str())), 2);
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--only osub --write-costs /dev/null >/dev/null 2>&1").c_str())),
            2);
}

// --leader RANKS adds, per live policy, a paced local row and leader mode's two roles measured the
// same way (plugin_bench/leader_overhead.hpp): rank 0 and the costliest follower, each in its own
// process. A follower's decision allocates nothing; the leader's memo takes one block every 512
// decisions, so at most one allocation over the 200 counted calls. Their times are the benchmark's
// to report, not this test's. --leader beside --write-costs (which charges local mode only), a rank
// count outside 2..64, or a count or pause that is no number, exits 2.
TEST(DeployedCost, TheOverheadBenchMeasuresLeaderAndFollowerApart) {
  const std::string bench = std::string(NCCLBOT_OVERHEAD_BENCH) + " " + NCCLBOT_TUNER_PLUGIN + " 200 1 ";
  const std::string out_path = testing::TempDir() + "ncclbot_overhead_leader.json";
  const std::string cmd = bench + "--leader 2 --pause-us 0 --only ucb1 >" + out_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out_path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto row = [&](const std::string& role) {
    const size_t at = json.find("\"role\": \"" + role + "\"");
    EXPECT_NE(at, std::string::npos) << role << ": " << json;
    return at == std::string::npos ? std::string() : json.substr(at, json.find('}', at) - at);
  };
  const auto allocations = [](const std::string& r) {
    const size_t at = r.find("\"allocations_per_call\": ");
    return at == std::string::npos ? -1.0 : std::stod(r.substr(at + 24));
  };
  const std::string local = row("local"), leader = row("leader"), follower = row("follower");
  EXPECT_NE(leader.find("\"ranks\": 2"), std::string::npos) << leader;
  EXPECT_NE(follower.find("\"policy\": \"ucb1:"), std::string::npos) << follower;
  EXPECT_EQ(allocations(local), 0.0) << local;
  EXPECT_EQ(allocations(follower), 0.0) << follower;
  EXPECT_GE(allocations(leader), 0.0) << leader;
  EXPECT_LE(allocations(leader), 1.0 / 200) << leader;
  std::remove(out_path.c_str());
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--leader 2 --write-costs /dev/null >/dev/null 2>&1").c_str())),
            2);
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--leader 1 >/dev/null 2>&1").c_str())), 2);
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--leader abc >/dev/null 2>&1").c_str())), 2);  // not 0: off
  EXPECT_EQ(WEXITSTATUS(std::system((bench + "--leader 2 --pause-us 2x >/dev/null 2>&1").c_str())), 2);
}
#endif
