#include "plugin/plugin_log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

namespace ncclbot::plugin {

void PluginLog::emit(int level, unsigned long flags, const char* fmt, va_list args) const {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, args);
  if (fn_ != nullptr) {
    fn_(level, flags, __FILE__, __LINE__, "ncclbot: %s", line);
  } else if (level == kNcclLogWarn) {
    std::fprintf(stderr, "ncclbot tuner WARN: %s\n", line);
  }
}

void PluginLog::warn(const char* fmt, ...) const {
  va_list args;
  va_start(args, fmt);
  emit(kNcclLogWarn, kNcclLogTuning, fmt, args);
  va_end(args);
}

void PluginLog::info(const char* fmt, ...) const {
  va_list args;
  va_start(args, fmt);
  emit(kNcclLogInfo, kNcclLogTuning, fmt, args);
  va_end(args);
}

void PluginLog::init_info(const char* fmt, ...) const {
  va_list args;
  va_start(args, fmt);
  emit(kNcclLogInfo, kNcclLogTuning | kNcclLogInit, fmt, args);
  va_end(args);
}

bool warn_once(const std::string& problem) {
  static std::mutex mu;
  static std::set<std::string>* seen = new std::set<std::string>();  // never destroyed, like the runtime
  std::lock_guard<std::mutex> lock(mu);
  return seen->insert(problem).second;
}

}  // namespace ncclbot::plugin
