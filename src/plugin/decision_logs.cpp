#include "plugin/decision_logs.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <ctime>

#include "ncclbot/version.hpp"

namespace ncclbot::plugin {
namespace {

// NCCL's version as the process's libnccl reports it (ncclGetVersion: 22800 for 2.28.0), or
// "unknown" when none is loaded (plugin-check drives the plugin without NCCL).
std::string nccl_version_text() {
  using GetVersion = int (*)(int*);
  const auto fn = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int v = 0;
  if (fn == nullptr || fn(&v) != 0) return "unknown";
  return std::to_string(v);
}

}  // namespace

void flush_decision_log(DecisionLog& log, const PluginLog& id_log) {
  log.flush();
  if (log.dropped() > 0 || log.failed_writes() > 0)
    id_log.warn("NCCLBOT_LOG %s: %llu records dropped (the buffer was full), %llu writes failed, so far",
                log.path().c_str(), (unsigned long long)log.dropped(),
                (unsigned long long)log.failed_writes());
}

std::shared_ptr<DecisionLog> DecisionLogs::open(const PluginConfig& cfg, const PluginLog& log) {
  const std::string path = DecisionLog::expand(cfg.log_path, cfg.rank);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = logs_.find(path); it != logs_.end()) return it->second;
  // The header: what a reader needs to interpret the records and to recompute any number from them.
  std::string text = "format=ncclbot decision log\npolicy=" +
                     (cfg.policy_spec.empty() ? std::string("auto") : cfg.policy_spec) +
                     "\nseed=" + std::to_string(cfg.seed) + "\nrank=" + std::to_string(cfg.rank) +
                     "\npid=" + std::to_string(::getpid()) + "\nplugin_version=" + std::string(kVersion) +
                     "\nnccl_version=" + nccl_version_text() +
                     "\nstarted_unix=" + std::to_string(::time(nullptr)) + "\n";
  // Knob mode's lists (NCCLBOT_KNOBS), on one line: a reader takes the log's knob call records only
  // under it.
  if (!cfg.knobs.empty()) {
    std::string knobs = cfg.knobs;
    for (char& ch : knobs)
      if (ch == '\n' || ch == '\r') ch = ' ';
    text += "knobs=" + knobs + "\n";
  }
  std::string error;
  DecisionLogSettings settings{cfg.log_path, cfg.log_max_bytes, text};
  std::shared_ptr<DecisionLog> opened = DecisionLog::open(settings, cfg.rank, &error);
  if (!opened) {
    log.warn("NCCLBOT_LOG: %s; no decision log", error.c_str());
    logs_[path] = nullptr;  // said once
    return nullptr;
  }
  log.info("decision log: %s", opened->path().c_str());
  logs_[path] = opened;
  return opened;
}

}  // namespace ncclbot::plugin
