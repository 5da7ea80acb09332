#include "plugin_bench/leader_overhead.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "plugin/loaded_tuner.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin_bench/allocation_counter.hpp"
#include "plugin_bench/forked_ranks.hpp"

namespace ncclbot::bench {
namespace {

constexpr uint64_t kCommId = 0x1eade7;
constexpr size_t kBytes = size_t(1) << 20;

// NCCL's cost table for the case: four arms, the prior preferring Ring/Simple.
void fill_table(float (&t)[7][3]) {
  for (auto& row : t)
    for (float& v : row) v = -1.0f;
  t[0][0] = 14.0f, t[0][2] = 13.0f, t[1][1] = 12.0f, t[1][2] = 11.0f;
}

// One rank's process: its calls timed, then one line "rank median_ns min_ns allocations" on `out`.
[[noreturn]] void rank_main(const std::string& plugin_path, const std::string& policy, int ranks, int rank,
                            int port, long calls, int reps, std::chrono::microseconds gap,
                            pthread_barrier_t* barrier, int out) {
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", policy.c_str(), 1);
  setenv("NCCLBOT_KNOBS", "", 1);
  setenv("NCCLBOT_SEED", "7", 1);
  setenv("NCCLBOT_RANK", std::to_string(rank).c_str(), 1);
  if (ranks > 1) {
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("NCCLBOT_LEADER_SECRET", "leader-overhead-measurement", 1);
    setenv("NCCLBOT_LEADER_TIMEOUT_MS", "60000", 1);
  } else {
    setenv("NCCLBOT_AGREEMENT", "local", 1);
  }
  const plugin::LoadedTuner loaded = plugin::load_tuner(plugin_path.c_str());
  if (!loaded.ok()) _exit(3);
  void* ctx = nullptr;
  if (loaded.tuner->init(&ctx, kCommId, size_t(ranks), 1, nullptr, nullptr, nullptr) != 0) _exit(4);
  pthread_barrier_wait(barrier);  // communicator init is collective
  volatile float sink = 0;
  // Each call timed on its own (the clock is vDSO-read, its cost measured apart and taken off), then
  // a pause before the next, as a collective's run on the GPU gives the plugin: so that a follower's
  // windows can arrive ahead of its calls as they do in a job, and the time a follower would wait for
  // a late one is not what is measured. The rank processes then do not fill this machine's cores.
  double timed_ns = 0;
  const auto repetition = [&] {
    timed_ns = 0;
    for (long i = 0; i < calls; ++i) {
      float t[7][3];
      fill_table(t);
      int channels = 0;
      const auto t0 = std::chrono::steady_clock::now();
      loaded.tuner->getCollInfo(ctx, 4, kBytes, 1, reinterpret_cast<float**>(t), 7, 3, 0, &channels);
      const auto t1 = std::chrono::steady_clock::now();
      timed_ns += double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
      sink = t[1][2];
      std::this_thread::sleep_for(gap);
    }
  };
  const auto reports = [&] {
    for (long i = 0; i < calls; ++i)
      loaded.report(kCommId, ranks, 1, 4, kBytes, 1, int(i % 3), 10.0 + double(i % 7));
  };
  const auto clock_cost_ns = [&] {
    double ns = 0;
    for (long i = 0; i < calls; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto t1 = std::chrono::steady_clock::now();
      ns += double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    }
    return ns / double(calls);
  };
  std::vector<double> per_call;  // ns, one per repetition
  for (int k = 0; k < reps; ++k) {
    repetition();
    per_call.push_back(timed_ns / double(calls) - clock_cost_ns());
    reports();
  }
  std::sort(per_call.begin(), per_call.end());
  start_counting_allocations();
  repetition();
  const double allocations = double(stop_counting_allocations()) / double(calls);
  pthread_barrier_wait(barrier);  // every rank done before anyone finalises
  loaded.tuner->finalize(ctx);
  char line[256];
  const int n = std::snprintf(line, sizeof line, "%d %.3f %.3f %.6f\n", rank, per_call[per_call.size() / 2],
                              per_call.front(), allocations);
  const bool written = n > 0 && write(out, line, size_t(n)) == n;
  _exit(written ? 0 : 5);
}

}  // namespace

PacedCaseResult time_paced_case(const std::string& plugin_path, const std::string& policy, int ranks,
                                long calls, int reps, int pause_us) {
  PacedCaseResult r;
  r.policy = policy;
  r.ranks = ranks;
  const int port = plugin::free_loopback_port();
  const std::optional<std::string> written =
      run_rank_processes(ranks, [&](int rank, pthread_barrier_t* barrier, int out) {
        rank_main(plugin_path, policy, ranks, rank, port, calls, reps, std::chrono::microseconds(pause_us),
                  barrier, out);
      });
  if (!written) return r.error = "a rank process failed", r;
  const std::string& text = *written;
  int seen = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    int rank = -1;
    RoleCost c;
    if (std::sscanf(text.c_str() + at, "%d %lf %lf %lf", &rank, &c.median_ns, &c.min_ns,
                    &c.allocations_per_call) != 4)
      return r.error = "a rank's result line is malformed", r;
    if (rank == 0)
      r.rank0 = c;
    else if (c.median_ns > r.follower.median_ns)
      r.follower = c;
    ++seen;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  if (seen != ranks)
    r.error = "only " + std::to_string(seen) + " of " + std::to_string(ranks) + " ranks reported";
  return r;
}

}  // namespace ncclbot::bench
