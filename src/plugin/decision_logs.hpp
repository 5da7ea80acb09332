#pragma once
// The process's decision logs (NCCLBOT_LOG), one per expanded path, opened at first use and shared
// by the communicators that log to it.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "plugin/decision_log_writer.hpp"
#include "plugin/plugin_config.hpp"
#include "plugin/plugin_log.hpp"

namespace ncclbot::plugin {

// Writes what `log` buffers now (a communicator's finalize) and, when records were lost so far, one
// WARN line on `id`'s log saying how many.
void flush_decision_log(DecisionLog& log, const PluginLog& id_log);

class DecisionLogs {
 public:
  // The log for `cfg` (this rank's path), or nullptr when it cannot be opened (one WARN per path).
  std::shared_ptr<DecisionLog> open(const PluginConfig& cfg, const PluginLog& log);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<DecisionLog>> logs_;  // by expanded path
};

}  // namespace ncclbot::plugin
