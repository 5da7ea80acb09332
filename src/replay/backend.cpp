#include "ncclbot/replay/backend.hpp"

#include <ostream>

#include "ncclbot/core/cuda_probe.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {
int& device_local_rank() {
  static int local_rank = 0;
  return local_rank;
}
ReplayEngineFn& cuda_engine_slot() {
  static ReplayEngineFn engine = nullptr;
  return engine;
}
}  // namespace

ReplayBackend parse_replay_backend(const std::string& text) {
  if (text == "cpu") return ReplayBackend::kCpu;
  if (text == "cuda") return ReplayBackend::kCuda;
  if (text == "auto") return ReplayBackend::kAuto;
  throw UsageError("--backend: unknown backend '" + text + "' (valid: cpu, cuda, auto)");
}

std::string_view replay_backend_name(ReplayBackend backend) {
  switch (backend) {
    case ReplayBackend::kCuda:
      return "cuda";
    case ReplayBackend::kAuto:
      return "auto";
    default:
      return "cpu";
  }
}

void set_cuda_replay_engine(ReplayEngineFn engine) {
  cuda_engine_slot() = engine;
}
ReplayEngineFn cuda_replay_engine() {
  return cuda_engine_slot();
}

void set_device_local_rank(int local_rank) {
  device_local_rank() = local_rank;
}

ReplayBackend resolve_replay_backend(ReplayBackend requested, std::ostream& log) {
  if (requested == ReplayBackend::kCpu) return ReplayBackend::kCpu;
  select_cuda_device(device_local_rank());  // before the probe creates a context
  const CudaProbe probe = probe_cuda();
  std::string why;
  if (probe.usable_devices == 0)
    why = "no usable CUDA device (" + probe.reason + ")";
  else if (!cuda_replay_engine())
    why = "this build has no CUDA replay engine";
  if (why.empty()) return ReplayBackend::kCuda;
  if (requested == ReplayBackend::kCuda) throw UsageError("--backend cuda: " + why);
  log << "ncclbot: " << why << "; replaying on the CPU\n";
  return ReplayBackend::kCpu;
}

namespace {

// What the CUDA kernels cannot replay, for `why`: `cuda` asked for is a UsageError, `auto` replays on
// the CPU and says so on `log`.
ReplayBackend cpu_instead(ReplayBackend requested, const std::string& why, std::ostream& log) {
  if (requested == ReplayBackend::kCuda) throw UsageError("--backend cuda: " + why + " (use --backend cpu)");
  log << "ncclbot: " << why << "; replaying on the CPU\n";
  return ReplayBackend::kCpu;
}

}  // namespace

ReplayBackend backend_for_specs(ReplayBackend requested, ReplayBackend resolved,
                                const std::vector<PolicySpec>& configs, std::ostream& log) {
  if (resolved == ReplayBackend::kCpu) return resolved;
  for (const PolicySpec& p : configs)
    if (p.conservative || p.watch)
      return cpu_instead(requested,
                         "policy " + p.text +
                             (p.conservative ? " runs in the conservative wrapper" : " has a watch rule") +
                             ", which the CUDA replay kernels do not hold",
                         log);
  return resolved;
}

ReplayBackend backend_for_job(ReplayBackend resolved, const ReplayJob& job, std::ostream& log) {
  return backend_for_specs(ReplayBackend::kAuto, resolved, job.configs, log);
}

ReplayResults run_replay(const ReplayJob& job, ReplayBackend resolved) {
  if (resolved == ReplayBackend::kCuda && cuda_replay_engine()) return cuda_replay_engine()(job);
  return run_cpu_replay(job);
}

}  // namespace ncclbot
