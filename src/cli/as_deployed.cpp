#include "cli/as_deployed.hpp"

#include <CLI/CLI.hpp>

#include "ncclbot/core/error.hpp"

namespace ncclbot::cli {

void add_as_deployed_option(CLI::App& app, std::string& mode) {
  app.add_option("--as-deployed", mode,
                 "local or leader: charge each policy the plugin's measured per-call cost and use the "
                 "plugin's measured feedback delay of that mode (unless --delay is given)");
}

std::optional<Deployment> parse_as_deployed(const std::string& mode) {
  if (mode.empty()) return std::nullopt;
  try {
    return parse_deployment(mode);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--as-deployed: ") + e.what());
  }
}

}  // namespace ncclbot::cli
