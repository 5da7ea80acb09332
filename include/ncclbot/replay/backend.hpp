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

ReplayResults run_replay(const ReplayJob& job, ReplayBackend resolved);

}  // namespace ncclbot
