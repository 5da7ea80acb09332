#pragma once
// Loads the built libnccl-tuner-ncclbot.so the way NCCL does (dlopen RTLD_NOW | RTLD_LOCAL, then
// dlsym of the versioned structs) and provides a logger that records what the plugin says.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/kernel_channel_event.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"
#include "support/run_cli.hpp"  // plugin_path()

namespace ncclbot::test {

struct Plugin {
  void* handle = nullptr;
  const NcclTunerV6* v6 = nullptr;
  const NcclTunerV5* v5 = nullptr;
  const NcclTunerV4* v4 = nullptr;
  const NcclTunerV3* v3 = nullptr;
  const NcclTunerV2* v2 = nullptr;
  const NcclProfilerV7* prof7 = nullptr;
  const NcclProfilerV6* prof6 = nullptr;
  const NcclProfilerV5* prof5 = nullptr;
  const NcclProfilerV4* prof4 = nullptr;
  ncclbotReportLatency_t report = nullptr;

  Plugin() {
    handle = dlopen(plugin_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    v6 = static_cast<const NcclTunerV6*>(dlsym(handle, "ncclTunerPlugin_v6"));
    v5 = static_cast<const NcclTunerV5*>(dlsym(handle, "ncclTunerPlugin_v5"));
    v4 = static_cast<const NcclTunerV4*>(dlsym(handle, "ncclTunerPlugin_v4"));
    v3 = static_cast<const NcclTunerV3*>(dlsym(handle, "ncclTunerPlugin_v3"));
    v2 = static_cast<const NcclTunerV2*>(dlsym(handle, "ncclTunerPlugin_v2"));
    prof7 = static_cast<const NcclProfilerV7*>(dlsym(handle, "ncclProfiler_v7"));
    prof6 = static_cast<const NcclProfilerV6*>(dlsym(handle, "ncclProfiler_v6"));
    prof5 = static_cast<const NcclProfilerV5*>(dlsym(handle, "ncclProfiler_v5"));
    prof4 = static_cast<const NcclProfilerV4*>(dlsym(handle, "ncclProfiler_v4"));
    report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(handle, "ncclbotReportLatency"));
  }
  bool ok() const { return v6 && v5 && v4 && v3 && v2 && prof7 && prof6 && prof5 && prof4 && report; }
};

// One process-wide copy (the library is -z nodelete anyway).
inline Plugin& plugin() {
  static Plugin p;
  return p;
}

struct LogLine {
  int level;
  unsigned long flags;
  std::string text;
};

inline std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}
inline std::vector<LogLine>& log_lines() {
  static std::vector<LogLine> v;
  return v;
}

inline void recording_logger(int level, unsigned long flags, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(log_mutex());
  log_lines().push_back({level, flags, buf});
}

inline void clear_log() {
  std::lock_guard<std::mutex> lock(log_mutex());
  log_lines().clear();
}

// Whether any recorded line at `level` contains `needle`.
inline bool logged(int level, const std::string& needle) {
  std::lock_guard<std::mutex> lock(log_mutex());
  for (const auto& l : log_lines())
    if (l.level == level && l.text.find(needle) != std::string::npos) return true;
  return false;
}

// One kernel channel of the Coll event `coll` from GPU time `start_ns` to `stop_ns`, as NCCL reports
// it (start, the KernelChStop state, stop) through the profiler table `prof` (v5 and later). Whether
// the plugin gave the channel a handle.
template <typename Descr, typename Profiler>
bool run_kernel_channel(const Profiler& prof, void* ctx, void* coll, uint64_t start_ns, uint64_t stop_ns) {
  Descr k = ncclbot::plugin::kernel_channel_start<Descr>(coll, 0, start_ns);
  void* ch = nullptr;
  prof.startEvent(ctx, &ch, &k);
  if (ch == nullptr) return false;
  NcclProfilerEventStateArgs args;
  args.kernelCh.pTimer = stop_ns;
  prof.recordEventState(ch, kNcclProfilerKernelChStop, &args);
  prof.stopEvent(ch);
  return true;
}

// A cost table as NCCL builds it: contiguous float[7][3], every entry -1 until filled.
struct CostTable7x3 {
  float t[7][3];
  CostTable7x3() {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
  }
  float** ptr() { return reinterpret_cast<float**>(t); }
  // NCCL's rule: smallest non-negative entry, strict '<', row-major (lowest algo, then proto).
  int pick() const {
    int best = -1;
    for (int s = 0; s < 21; ++s) {
      const float v = t[s / 3][s % 3];
      if (v < 0.0f) continue;
      if (best < 0 || v < t[best / 3][best % 3]) best = s;
    }
    return best;
  }
};

// Scoped environment variable.
struct EnvVar {
  std::string name;
  EnvVar(const char* n, const std::string& value) : name(n) { setenv(n, value.c_str(), 1); }
  ~EnvVar() { unsetenv(name.c_str()); }
};

// A cost table with two valid arms: Tree/LL at 10 us and Ring/Simple at 20 us.
inline CostTable7x3 two_arms() {
  CostTable7x3 c;
  c.t[0][0] = 10.0f;
  c.t[1][2] = 20.0f;
  return c;
}

}  // namespace ncclbot::test
