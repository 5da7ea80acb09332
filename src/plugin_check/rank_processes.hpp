#pragma once
// Leader mode (plugin-check --ranks N): one context checked as a multi-rank job runs the plugin, in
// N processes forked from this one, each loading the plugin fresh with NCCLBOT_LEADER on loopback;
// every rank's every decision compared with the replay of the leader's protocol (plugin_check.hpp).
#include <string>

#include "plugin_check/plugin_check.hpp"

namespace ncclbot::plugin_check {

// Context c checked in rank processes of its own; `secret` is the leader's key for this run.
ContextOutcome check_context_ranks(const Sweep& sweep, int c, const PolicySpec& spec,
                                   const CheckSettings& settings, const std::string& secret);

// Loads the plugin in a child process (this one must not: its rank processes are forked from it
// and load the plugin fresh, as each of a job's processes does); a usage error when it cannot.
void preflight_plugin(const std::string& path);

}  // namespace ncclbot::plugin_check
