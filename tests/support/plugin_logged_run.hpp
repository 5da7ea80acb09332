#pragma once
// A simulated sweep and the decision log the real plugin writes over it, driven by plugin-check with
// a behaviour policy (seed 11), for the tests of what reads such logs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace ncclbot::test
