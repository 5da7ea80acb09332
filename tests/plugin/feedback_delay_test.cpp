// The plugin's measured feedback delay (plugin_feedback_delay, feedback_lag.hpp) against what its
// protocols imply, derived by hand:
//  - one rank, every latency reported before the next call: lag 0 on every decision;
//  - one rank, 8 calls in flight: decisions 0..7 see lags 0..7, every later one 8 (median, p90 and
//    max 8 over 2048 decisions);
//  - leader mode, ranks in lockstep (replay/leader_protocol.hpp, docs/plugin.md "Decision windows"):
//    a follower asks for window k (calls 8k .. 8k + 7) at its call 8k - 12, when the leader has
//    absorbed the latencies of calls 0 .. 8k - 13 (the ranks are in lockstep, each latency reported
//    before the next call), so call t of window k >= 2 is decided with lag t - (8k - 12): one each
//    of 12..19 per window. The leader's server thread may read the request late, while the
//    leader's rank goes on and reports more latencies, which can only lower those lags.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

nlohmann::json measure(int calls, int ranks) {
  const std::string dir = temp_dir();
  const std::string cmd = std::string("'") + NCCLBOT_FEEDBACK_DELAY_TOOL + "' '" + plugin_path() + "' " +
                          std::to_string(calls) + " " + std::to_string(ranks) + " >'" + dir + "/out.json'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return nlohmann::json::parse(read_all(dir + "/out.json"));
}

const nlohmann::json& row(const nlohmann::json& j, const std::string& name, int in_flight) {
  for (const auto& r : j["results"])
    if (r["case"] == name && r["in_flight"] == in_flight) return r;
  static const nlohmann::json none;
  ADD_FAILURE() << "no row " << name << " " << in_flight;
  return none;
}

}  // namespace

TEST(FeedbackDelay, MeasuredLagsMatchTheHandDerivationInEachMode) {
  const nlohmann::json j = measure(2048, 2);

  const auto& now = row(j, "local", 0);
  EXPECT_EQ(now["decisions"], 2048);
  EXPECT_EQ(now["median"], 0);
  EXPECT_EQ(now["max"], 0);

  const auto& queued = row(j, "local", 8);
  EXPECT_EQ(queued["decisions"], 2048);
  EXPECT_EQ(queued["median"], 8);
  EXPECT_EQ(queued["p90"], 8);
  EXPECT_EQ(queued["max"], 8);

  const auto& leader = row(j, "leader", 0);
  // Calls 16..2063 at least (the follower asks up to window (2047 + 12) / 8 = 257).
  EXPECT_GE(leader["decisions"].get<int>(), 2048);
  EXPECT_LE(leader["median"].get<int>(), 15);
  EXPECT_LE(leader["p90"].get<int>(), 19);
  EXPECT_LE(leader["max"].get<int>(), 19);
  EXPECT_EQ(leader["follower_decisions"], 2048);      // one follower
  EXPECT_GE(leader["follower_waits"].get<int>(), 1);  // its first call waits for window 0

  // Calls in flight on the leader's rank add to the window lag.
  const auto& leader_queued = row(j, "leader", 8);
  EXPECT_LE(leader_queued["max"].get<int>(), 19 + 8);
  EXPECT_LE(leader_queued["median"].get<int>(), 15 + 8);
}
