#pragma once
// Logging through NCCL's own logger (TUNING subsystem, so NCCL_DEBUG_SUBSYS=TUNING shows it). A NULL
// logger is legal: then warnings go to stderr and everything else is dropped.
#include <cstdarg>
#include <string>

#include "plugin/nccl_abi.hpp"

namespace ncclbot::plugin {

class PluginLog {
 public:
  PluginLog() = default;
  explicit PluginLog(nccl_logger_t fn) : fn_(fn) {}

  void warn(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void info(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  // INFO under INIT as well as TUNING, so the "plugin loaded" line shows with NCCL_DEBUG_SUBSYS=INIT.
  void init_info(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  nccl_logger_t function() const { return fn_; }

 private:
  void emit(int level, unsigned long flags, const char* fmt, va_list args) const;
  nccl_logger_t fn_ = nullptr;
};

// true the first time `problem` is seen in the process: one WARN per distinct problem, since a job
// creates many communicators.
bool warn_once(const std::string& problem);

}  // namespace ncclbot::plugin
