// plugin_feedback_delay: how late measured latencies reach the plugin's policy, in each way the
// plugin runs (docs/plugin.md "Feedback delay"). Every case forks fresh processes that load
// libnccl-tuner-ncclbot.so as NCCL does, play `calls` AllReduce calls of one context (1 MiB) with
// `ucb1:c=0.2,n0=2`, and report each call's latency through ncclbotReportLatency `in_flight` calls
// after deciding it (0 = before the next call is decided, as plugin-check does; a job whose host
// runs ahead of the GPU has calls in flight). The leader's finalize line (feedback_lag.hpp) is read
// back from the plugin's logger, and so are the followers' "follower waited for N of M decisions"
// lines (how often a decision window was not there in time). Cases:
//   local       one rank, NCCLBOT_AGREEMENT=local
//   leader      `ranks` processes on loopback (rank 0 leads), in lockstep: every rank finishes call
//               i before any starts call i + 1, as collectives synchronise ranks
// Prints one JSON document:
//   {"results": [{"case", "ranks", "in_flight", "decisions", "median", "p90", "max",
//                 "follower_decisions", "follower_waits", "longest_wait_ms"}, ...]}
// (the follower counts summed over the followers, the longest wait the longest of any; 0 in local mode).
// Usage: plugin_feedback_delay PLUGIN.so [calls] [ranks]
#include <pthread.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "plugin/loaded_tuner.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"
#include "plugin_bench/forked_ranks.hpp"

namespace {

constexpr uint64_t kCommId = 0x5eed0f1a6ull;
constexpr size_t kBytes = size_t(1) << 20;

int g_log_fd = -1;  // where a rank's logger copies the plugin's feedback-delay and follower-wait lines

void logger(int, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (g_log_fd >= 0 && (std::strstr(buf, "feedback delay of") != nullptr ||
                        std::strstr(buf, "follower waited for") != nullptr)) {
    const std::string line = std::string(buf) + "\n";
    if (write(g_log_fd, line.data(), line.size()) < 0) _exit(6);
  }
}

struct Case {
  const char* name;
  int ranks;
  int in_flight;
  bool leader;
};

// True latencies of the four arms NCCL's table offers (Tree/LL, Tree/Simple, Ring/LL128,
// Ring/Simple); the prior prefers Ring/Simple, so the policy has something to learn.
double latency_of(int slot, uint64_t call) {
  const double base = slot == 0 ? 10.0 : slot == 2 ? 10.4 : slot == 4 ? 10.8 : 11.5;
  return base * (1.0 + 0.01 * double((call * 2654435761u) % 7));
}

[[noreturn]] void rank_main(const char* so, const Case& c, int rank, int port, uint64_t calls,
                            pthread_barrier_t* barrier, int log_fd) {
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", "ucb1:c=0.2,n0=2", 1);
  setenv("NCCLBOT_SEED", "7", 1);
  setenv("NCCLBOT_RANK", std::to_string(rank).c_str(), 1);
  if (c.leader) {
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("NCCLBOT_LEADER_SECRET", "feedback-delay-measurement", 1);
    setenv("NCCLBOT_LEADER_TIMEOUT_MS", "20000", 1);
  } else {
    setenv("NCCLBOT_AGREEMENT", "local", 1);
  }
  const ncclbot::plugin::LoadedTuner loaded = ncclbot::plugin::load_tuner(so);
  if (!loaded.ok()) _exit(3);
  const NcclTunerV5* tuner = loaded.tuner;
  const ncclbotReportLatency_t report = loaded.report;
  g_log_fd = log_fd;
  void* ctx = nullptr;
  if (tuner->init(&ctx, kCommId, size_t(c.ranks), 1, logger, nullptr, nullptr) != 0) _exit(4);
  pthread_barrier_wait(barrier);                   // communicator init is collective
  std::deque<std::pair<int, uint64_t>> in_flight;  // (slot, call) decided, latency not yet reported
  for (uint64_t i = 0; i < calls; ++i) {
    float t[7][3];
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    t[0][0] = 14.0f, t[0][2] = 13.0f, t[1][1] = 12.0f, t[1][2] = 11.0f;
    tuner->getCollInfo(ctx, 4, kBytes, 1, reinterpret_cast<float**>(t), 7, 3, 0, nullptr);
    int slot = -1;
    for (int s = 0; s < 21; ++s)
      if (t[s / 3][s % 3] >= 0.0f && (slot < 0 || t[s / 3][s % 3] < t[slot / 3][slot % 3])) slot = s;
    in_flight.emplace_back(slot, i);
    if (int(in_flight.size()) > c.in_flight) {
      const auto [s, call] = in_flight.front();
      in_flight.pop_front();
      report(kCommId, c.ranks, 1, 4, kBytes, s / 3, s % 3, latency_of(s, call));
    }
    pthread_barrier_wait(barrier);
  }
  pthread_barrier_wait(barrier);  // every rank done before anyone finalises
  tuner->finalize(ctx);
  _exit(0);
}

// Runs one case; the leader's "feedback delay of N policy decisions: median M, p90 P, max X" line and
// each follower's "follower waited for N of M decisions (longest X ms)" line.
std::string run_case(const char* so, const Case& c, uint64_t calls) {
  const int port = ncclbot::plugin::free_loopback_port();
  return ncclbot::bench::run_rank_processes(c.ranks,
                                            [&](int rank, pthread_barrier_t* barrier, int out) {
                                              rank_main(so, c, rank, port, calls, barrier, out);
                                            })
      .value_or("");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so [calls] [ranks]\n", argv[0]);
    return 2;
  }
  const uint64_t calls = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4096;
  const int ranks = argc > 3 ? std::atoi(argv[3]) : 4;
  if (calls == 0 || ranks < 2 || ranks > 64) {
    std::fprintf(stderr, "%s: calls must be >= 1 and ranks in [2, 64]\n", argv[0]);
    return 2;
  }
  const Case cases[] = {
      {"local", 1, 0, false}, {"local", 1, 8, false}, {"leader", ranks, 0, true}, {"leader", ranks, 8, true}};
  std::string json = "{\"results\": [";
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const Case& c = cases[k];
    const std::string line = run_case(argv[1], c, calls);
    unsigned long long n = 0, median = 0, p90 = 0, max = 0;
    const char* at = std::strstr(line.c_str(), "feedback delay of");
    if (!at || std::sscanf(at, "feedback delay of %llu policy decisions: median %llu, p90 %llu, max %llu", &n,
                           &median, &p90, &max) != 4) {
      std::fprintf(stderr, "%s: case %s (%d ranks, %d in flight) logged no feedback delay\n", argv[0], c.name,
                   c.ranks, c.in_flight);
      return 1;
    }
    unsigned long long follower_decisions = 0, follower_waits = 0;
    double longest_ms = 0.0;
    int followers = 0;
    for (const char* f = line.c_str(); (f = std::strstr(f, "follower waited for")) != nullptr; ++f) {
      unsigned long long waited = 0, of = 0;
      double longest = 0.0;
      if (std::sscanf(f, "follower waited for %llu of %llu decisions (longest %lf ms)", &waited, &of,
                      &longest) != 3)
        continue;
      ++followers;
      follower_waits += waited;
      follower_decisions += of;
      if (longest > longest_ms) longest_ms = longest;
    }
    if (c.leader && followers != c.ranks - 1) {
      std::fprintf(stderr, "%s: case %s (%d ranks, %d in flight): %d followers logged their waits\n", argv[0],
                   c.name, c.ranks, c.in_flight, followers);
      return 1;
    }
    char row[512];
    std::snprintf(
        row, sizeof row,
        "%s{\"case\": \"%s\", \"ranks\": %d, \"in_flight\": %d, \"decisions\": %llu, \"median\": %llu, "
        "\"p90\": %llu, \"max\": %llu, \"follower_decisions\": %llu, \"follower_waits\": %llu, "
        "\"longest_wait_ms\": %.3f}",
        k ? ", " : "", c.name, c.ranks, c.in_flight, n, median, p90, max, follower_decisions, follower_waits,
        longest_ms);
    json += row;
  }
  json += "]}";
  std::printf("%s\n", json.c_str());
  return 0;
}
