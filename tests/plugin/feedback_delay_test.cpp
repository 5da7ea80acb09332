// The plugin's measured feedback delay (plugin_feedback_delay, feedback_lag.hpp) against what its
// protocols imply, derived by hand:
//  - one rank, every latency reported before the next call: lag 0 on every decision;
//  - one rank, 8 calls in flight: decisions 0..7 see lags 0..7, every later one 8 (median, p90 and
//    max 8 over 2048 decisions);
//  - leader mode, ranks in lockstep: window 0 (calls 0..255) is NCCL's choice (the context starts
//    once every rank's table is in, past every call already answered); a follower asks for window
//    w + 1 at call 256w + 128, when the leader has absorbed about 256w + 128 latencies, so call i of
//    window w + 1 is decided with lag i - (256w + 128), one lag of each of 128..383 per window:
//    median 255, p90 358 (ceil(0.9 * 2048) = 1844 decisions need 8 * (L - 127) >= 1844), max 383.
//    The leader's server thread may read the request late (its rank goes on, up to the follower's
//    call 256(w + 1), where the follower waits for the window), which lowers those lags by up to
//    128; it can never raise them. So the lower bounds are the latest possible reply's (lags 0..255
//    per window: median 127, p90 230, max 255).
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
  // Windows 1..8 (calls 256..2303) when the context starts at once; a start a window later, as a
  // slow HELLO may cause, leaves one window fewer.
  EXPECT_GE(leader["decisions"].get<int>(), 1792);
  EXPECT_LE(leader["median"].get<int>(), 255);
  EXPECT_GE(leader["median"].get<int>(), 127);
  EXPECT_LE(leader["p90"].get<int>(), 358);
  EXPECT_GE(leader["p90"].get<int>(), 230);
  EXPECT_LE(leader["max"].get<int>(), 383);
  EXPECT_GE(leader["max"].get<int>(), 255);

  // Calls in flight on the leader's rank add to the window lag.
  const auto& leader_queued = row(j, "leader", 8);
  EXPECT_LE(leader_queued["max"].get<int>(), 383 + 8);
  EXPECT_LE(leader_queued["median"].get<int>(), 255 + 8);
  EXPECT_GE(leader_queued["median"].get<int>(), 127 + 8);
}
