#pragma once
// Choosing where replays run. `cpu` is the thread-pool engine; `cuda` runs the kernels and is an
// error (exit 2, one line) without a usable device; `auto` takes CUDA when it is usable and says
// on the log stream that it fell back to the CPU otherwise. The CUDA engine, when built, installs
// itself with set_cuda_replay_engine() (the kernels library calls it before the first replay).
#include <iosfwd>
#include <string>

#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot {

enum class ReplayBackend { kCpu, kCuda, kAuto };
ReplayBackend parse_replay_backend(const std::string& text);  // cpu | cuda | auto
std::string_view replay_backend_name(ReplayBackend backend);

using ReplayEngineFn = ReplayResults (*)(const ReplayJob&);
void set_cuda_replay_engine(ReplayEngineFn engine);
ReplayEngineFn cuda_replay_engine();  // null when this build has none

// Resolves kAuto / checks kCuda (throws UsageError when CUDA is demanded but unusable); returns
// kCpu or kCuda. Fallback notes go to `log`.
ReplayBackend resolve_replay_backend(ReplayBackend requested, std::ostream& log);

// The backend for a command's policies once they are parsed: `resolved` unless a config runs in the
// conservative wrapper (`@conservative`) or has a watch rule (`@watch`), which the CUDA kernels do
// not hold: then `auto` replays on the CPU, saying so on `log`, and `cuda` is a UsageError. (Slot
// and knob sweeps both replay on either backend.)
ReplayBackend backend_for_specs(ReplayBackend requested, ReplayBackend resolved,
                                const std::vector<PolicySpec>& configs, std::ostream& log);

// Where one job of a command that resolved its backend before it knew every job (tune's grids, a
// study's units) replays: `resolved`, or the CPU, said on `log`, when one of its configs is what
// the CUDA kernels do not hold (backend_for_specs as `auto`).
ReplayBackend backend_for_job(ReplayBackend resolved, const ReplayJob& job, std::ostream& log);

// The node-local rank of this process (set by the MPI process group; 0 otherwise). When a GPU
// backend is resolved, the process first selects device local_rank mod (visible devices), so
// `mpirun -np 8 ncclbot-mpi ... --backend cuda` on an 8-GPU node puts one rank on each GPU.
void set_device_local_rank(int local_rank);

ReplayResults run_replay(const ReplayJob& job, ReplayBackend resolved);

}  // namespace ncclbot
