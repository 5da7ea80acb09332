// Installs the CUDA replay engine in builds that have one. It lives with the program, not the
// library, because a static library's self-registering object would never be linked in; every
// command that replays (replay, tune, run, bench) then reaches it through run_replay().
#ifdef NCCLBOT_HAVE_CUDA
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/cuda_engine.hpp"

namespace ncclbot::cli {
namespace {
const bool installed = (set_cuda_replay_engine(&run_cuda_replay), true);
}  // namespace
}  // namespace ncclbot::cli
#endif
