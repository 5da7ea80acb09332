#pragma once
// The tuner plugin loaded as NCCL loads it (dlopen RTLD_NOW | RTLD_LOCAL, then dlsym of the v5
// struct, and of v6 for getChunkSize; profiler v6) with its report function: what the plugin's
// benchmarks drive.
#include <dlfcn.h>

#include <string>

#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"

namespace ncclbot::plugin {

struct LoadedTuner {
  const NcclTunerV5* tuner = nullptr;
  const NcclTunerV6* tuner6 = nullptr;        // null in a plugin without v6
  const NcclProfilerV6* profiler6 = nullptr;  // null in a plugin without profiler v6
  ncclbotReportLatency_t report = nullptr;
  std::string error;  // why it is not loaded
  bool ok() const { return tuner != nullptr && report != nullptr; }
};

inline LoadedTuner load_tuner(const char* path) {
  LoadedTuner t;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    t.error = std::string("cannot load ") + path + ": " + (why ? why : "unknown error");
    return t;
  }
  t.tuner = static_cast<const NcclTunerV5*>(dlsym(h, "ncclTunerPlugin_v5"));
  t.tuner6 = static_cast<const NcclTunerV6*>(dlsym(h, "ncclTunerPlugin_v6"));
  t.profiler6 = static_cast<const NcclProfilerV6*>(dlsym(h, "ncclProfiler_v6"));
  t.report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(h, "ncclbotReportLatency"));
  if (!t.ok()) t.error = std::string(path) + " lacks ncclTunerPlugin_v5 or ncclbotReportLatency";
  return t;
}

}  // namespace ncclbot::plugin
