#pragma once
// A simulated sweep and the decision log the real plugin writes over it, driven by plugin-check with
// a behaviour policy (seed 11), for the tests of what reads such logs; and the check of `ope`'s truth
// under level shifts against AUTO's own log.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/log/decision_log.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {

struct PluginLoggedRun {
  std::string sweep, log;
};

// `synth_options` are synth's (without --out); the files are `name`.csv and `name`.log in temp_dir().
inline PluginLoggedRun plugin_logged_run(const std::string& name, const std::string& synth_options,
                                         const std::string& behaviour, int horizon) {
  PluginLoggedRun l{temp_dir() + "/" + name + ".csv", temp_dir() + "/" + name + ".log"};
  const CliResult s = run_cli("synth " + synth_options + " --out '" + l.sweep + "'");
  EXPECT_EQ(s.exit_code, 0) << s.err;
  const CliResult p = run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + l.sweep +
                              "' --policy '" + behaviour + "' --seed 11 --horizon " +
                              std::to_string(horizon) + " --log '" + l.log + "' --json");
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["log"], l.log);
  return l;
}

// The level-shift check of `ope --sweep`: plugin-check drives `random` and `auto` over `sweep` (seed 5,
// `horizon` calls per context), and `ope` gives AUTO's truth from the random log; with one sample per
// arm it must equal the mean latency AUTO measured itself on the same calls (`own`, its log).
struct AutoTruthAgainstItsOwnLog {
  double truth = 0.0, measured = 0.0;
  DecisionLogData own;
};
inline AutoTruthAgainstItsOwnLog auto_truth_against_its_own_log(const std::string& sweep, int horizon) {
  const std::string dir = temp_dir();
  for (const char* policy : {"random", "auto"}) {
    const CliResult p =
        run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + sweep + "' --policy " + policy +
                " --seed 5 --horizon " + std::to_string(horizon) + " --log '" + dir + "/" + policy + ".log'");
    EXPECT_EQ(p.exit_code, 0) << p.err;
  }
  AutoTruthAgainstItsOwnLog out;
  const CliResult r =
      run_cli("ope --log '" + dir + "/random.log' --policy auto --sweep '" + sweep + "' --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return out;
  out.truth = nlohmann::json::parse(r.out)["policies"][0]["truth_us"];
  out.own = read_decision_logs({dir + "/auto.log"});
  for (const auto& c : out.own.calls) out.measured += c.latency_us;
  out.measured /= double(out.own.calls.size());
  return out;
}

}  // namespace ncclbot::test
