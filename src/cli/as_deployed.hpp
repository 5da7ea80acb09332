#pragma once
// `--as-deployed local|leader` on replay and tune (docs/replay.md "Scoring as deployed"): every
// config pays the plugin's measured per-call cost, and the feedback delay is the one the plugin
// showed in that mode unless --delay is given.
#include <optional>
#include <string>

#include "ncclbot/replay/deployed_cost.hpp"

namespace CLI {
class App;
}

namespace ncclbot::cli {

void add_as_deployed_option(CLI::App& app, std::string& mode);

// The mode of --as-deployed; nullopt when it was not given, a UsageError for an unknown mode.
std::optional<Deployment> parse_as_deployed(const std::string& mode);

}  // namespace ncclbot::cli
