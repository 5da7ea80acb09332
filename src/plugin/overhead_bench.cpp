// plugin_overhead_bench: host cost of one getCollInfo call of libnccl-tuner-ncclbot.so, loaded as
// NCCL loads it. Each call gets a fresh copy of an 8-arm cost table (as NCCL builds one per call);
// the copy alone is timed too and reported as the baseline. Time is the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), so preemption on a loaded machine does not count; wall time is
// reported beside it. Prints one JSON document:
//   {"results": [{"mode", "policy", "ns_per_call_median", "ns_per_call_min", "wall_ns_per_call_median",
//                 "baseline_ns", ...}]}
// Usage: plugin_overhead_bench PLUGIN.so [calls_per_repetition] [repetitions]
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/loaded_tuner.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

struct Table {
  float t[7][3];
};

Table nccl_like_table() {
  Table c;
  for (auto& row : c.t)
    for (float& v : row) v = -1.0f;
  const float costs[][3] = {{0, 0, 12.5f}, {0, 1, 14.0f}, {0, 2, 20.0f}, {1, 0, 11.0f},
                            {1, 1, 13.0f}, {1, 2, 25.0f}, {4, 2, 30.0f}, {5, 2, 28.0f}};
  for (const auto& e : costs) c.t[int(e[0])][int(e[1])] = e[2];
  return c;
}

volatile float sink;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so [calls] [repetitions]\n", argv[0]);
    return 2;
  }
  const long calls = argc > 2 ? std::atol(argv[2]) : 1000000;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 7;
  const ncclbot::plugin::LoadedTuner loaded = ncclbot::plugin::load_tuner(argv[1]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error.c_str());
    return 2;
  }
  const NcclTunerV5* tuner = loaded.tuner;
  const ncclbotReportLatency_t report = loaded.report;
  const Table base = nccl_like_table();

  // The copy alone: what NCCL pays anyway to fill its table.
  std::vector<double> baseline;
  for (int r = 0; r < reps; ++r) {
    const double t0 = thread_cpu_ns();
    for (long i = 0; i < calls; ++i) {
      Table t = base;
      sink = t.t[i % 7][i % 3];
    }
    baseline.push_back((thread_cpu_ns() - t0) / double(calls));
  }

  struct Case {
    const char* mode;
    const char* policy;
    bool feedback;  // a latency reported after every call, so the policy's state keeps changing
  };
  // Every policy the plugin can run live, and table mode (what a supervised selector deploys as);
  // the "with feedback" rows are the costs a study scoring "as deployed" charges per call
  // (replay/deployed_cost.hpp).
  const Case cases[] = {{"off", "", false},
                        {"table", "", false},
                        {"online", "auto", true},
                        {"online", "random", true},
                        {"online", "greedy:n0=1", true},
                        {"online", "egreedy:eps=0.1,n0=1", true},
                        {"online", "ucb1:c=0.5,n0=8", false},
                        {"online", "ucb1:c=0.5,n0=8", true},
                        {"online", "thompson:n0=1,sigma=0.1", true},
                        {"online", "etc:m=2", true},
                        {"online", "swucb:c=0.1,window=100,n0=1", true},
                        {"online", "ducb:c=0.1,gamma=0.99,n0=1", true}};
  // Table mode reads a decision table; one row per size class of a sweep's contexts, the row the
  // calls match last, so a lookup scans them all.
  char table_path[] = "/tmp/ncclbot-overhead-table-XXXXXX";
  const int table_fd = mkstemp(table_path);
  if (table_fd < 0) return 2;
  std::string table = "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
  for (int k = 0; k < 24; ++k) {
    const size_t bytes = size_t(1) << (k == 23 ? 20 : k == 20 ? 23 : k);  // 1 MiB last
    table += "*,allreduce,*,*," + std::to_string(bytes) + "," + std::to_string(bytes) + ",Ring,LL\n";
  }
  if (write(table_fd, table.data(), table.size()) != ssize_t(table.size())) return 2;
  close(table_fd);
  setenv("NCCLBOT_TABLE", table_path, 1);
  std::string json = "{\"results\": [";
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const Case& c = cases[k];
    setenv("NCCLBOT_MODE", c.mode, 1);
    setenv("NCCLBOT_POLICY", c.policy, 1);
    void* ctx = nullptr;
    tuner->init(&ctx, 4242 + k, 1, 1, nullptr, nullptr, nullptr);
    std::vector<double> per_call, wall;
    for (int r = 0; r < reps; ++r) {
      const auto w0 = Clock::now();
      const double t0 = thread_cpu_ns();
      for (long i = 0; i < calls; ++i) {
        Table t = base;
        tuner->getCollInfo(ctx, 4, size_t(1) << 20, 1, reinterpret_cast<float**>(t.t), 7, 3, 0, nullptr);
        sink = t.t[1][0];
      }
      per_call.push_back((thread_cpu_ns() - t0) / double(calls));
      wall.push_back(std::chrono::duration<double, std::nano>(Clock::now() - w0).count() / double(calls));
      if (c.feedback) {  // feedback is timed apart: it runs on NCCL's proxy thread, not in getCollInfo
        for (long i = 0; i < calls; i += 1)
          report(4242 + k, 1, 1, 4, size_t(1) << 20, 1, int(i % 3), 10.0 + i % 7);
      }
    }
    tuner->finalize(ctx);
    char line[512];
    std::snprintf(
        line, sizeof line,
        "%s{\"mode\": \"%s\", \"policy\": \"%s\", \"feedback\": %s, \"calls\": %ld, \"repetitions\": %d, "
        "\"ns_per_call_median\": %.1f, \"ns_per_call_min\": %.1f, \"wall_ns_per_call_median\": %.1f, "
        "\"baseline_ns\": %.1f}",
        k ? ", " : "", c.mode, c.policy, c.feedback ? "true" : "false", calls, reps, median(per_call),
        *std::min_element(per_call.begin(), per_call.end()), median(wall), median(baseline));
    json += line;
  }
  json += "]}";
  unlink(table_path);
  std::printf("%s\n", json.c_str());
  return 0;
}
