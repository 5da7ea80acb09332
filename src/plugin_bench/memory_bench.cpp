// plugin_memory_bench: what each communicator costs in resident memory, with the plugin loaded as
// NCCL loads it. Opens N communicators in online mode (rank-local learners, the policy given), plays
// the given number of contexts on each (AllReduce at successive powers of two, 20 calls each with a
// reported latency), and reads the process's resident set (VmRSS) before and after. Prints one JSON
// document: {"communicators", "contexts_per_communicator", "policy", "rss_before_kib",
// "rss_after_kib", "kib_per_communicator"}.
// Usage: plugin_memory_bench PLUGIN.so [communicators] [contexts] [policy]
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "plugin/loaded_tuner.hpp"

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so [communicators] [contexts] [policy]\n", argv[0]);
    return 2;
  }
  const int comms = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int contexts = argc > 3 ? std::atoi(argv[3]) : 10;
  const std::string policy = argc > 4 ? argv[4] : "ucb1:c=0.1,n0=4";
  if (comms < 1 || contexts < 1 || contexts > 40) {
    std::fprintf(stderr, "communicators >= 1 and contexts in [1, 40]\n");
    return 2;
  }
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", policy.c_str(), 1);
  setenv("NCCLBOT_AGREEMENT", "local", 1);
  const ncclbot::plugin::LoadedTuner loaded = ncclbot::plugin::load_tuner(argv[1]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error.c_str());
    return 2;
  }
  const NcclTunerV5* tuner = loaded.tuner;
  const ncclbotReportLatency_t report = loaded.report;
  // A first communicator, played and closed, so the plugin's one-time state is in the baseline.
  auto play = [&](void* ctx, uint64_t id) {
    for (int c = 0; c < contexts; ++c) {
      const size_t bytes = size_t(1) << (10 + c % 30);
      for (int call = 0; call < 20; ++call) {
        float t[7][3];
        for (auto& row : t)
          for (float& v : row) v = -1.0f;
        t[0][0] = 10.0f, t[1][0] = 12.0f, t[1][2] = 30.0f, t[4][2] = 25.0f;
        tuner->getCollInfo(ctx, 4, bytes, 1, reinterpret_cast<float**>(t), 7, 3, 0, nullptr);
        int pick = 0;
        for (int s = 1; s < 21; ++s)
          if (t[s / 3][s % 3] >= 0.0f && t[s / 3][s % 3] < t[pick / 3][pick % 3]) pick = s;
        report(id, 8, 1, 4, bytes, pick / 3, pick % 3, 10.0 + call % 3);
      }
    }
  };
  {
    void* warm = nullptr;
    tuner->init(&warm, 1, 8, 1, nullptr, nullptr, nullptr);
    play(warm, 1);
    tuner->finalize(warm);
  }
  const long before = rss_kib();
  std::vector<void*> open(size_t(comms), nullptr);
  for (int i = 0; i < comms; ++i) {
    tuner->init(&open[size_t(i)], uint64_t(1000 + i), 8, 1, nullptr, nullptr, nullptr);
    play(open[size_t(i)], uint64_t(1000 + i));
  }
  const long after = rss_kib();
  std::printf(
      "{\"communicators\": %d, \"contexts_per_communicator\": %d, \"policy\": \"%s\", \"rss_before_kib\": "
      "%ld, "
      "\"rss_after_kib\": %ld, \"kib_per_communicator\": %.1f}\n",
      comms, contexts, policy.c_str(), before, after, double(after - before) / comms);
  for (void* ctx : open) tuner->finalize(ctx);
  return 0;
}
