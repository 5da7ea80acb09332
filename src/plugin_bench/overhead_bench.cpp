// plugin_overhead_bench: host cost of one getCollInfo call of libnccl-tuner-ncclbot.so, loaded as
// NCCL loads it. Each call gets a fresh copy of an 8-arm cost table (as NCCL builds one per call);
// the copy alone is timed too and reported as the baseline. Time is the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID, through the benchmark harness, bench/harness.hpp, with no warm-up run),
// so preemption on a loaded machine does not count; wall time is reported beside it. The cases: off, table
// mode, every policy the plugin can run live at its defaults (the registry's, policy/policy.hpp) with a
// latency reported after every call, and UCB1 without feedback; with --knobs LISTS, every live
// policy again in knob mode (NCCLBOT_KNOBS=LISTS through tuner v6), twice: each call getCollInfo,
// NCCL's pick over the table and the one getChunkSize NCCL then makes, timed together; and
// getCollInfo alone; and UCB1 (watching every call, and with `@watch`) driven through the profiler as
// NCCL 2.29-2.30 drives it (profiler v6: each call's CollApi event, getCollInfo, its Coll event and,
// when the activation mask it loaded holds KernelCh, two kernel channels), timed together. Prints one
// JSON document:
//   {"results": [{"mode", "policy", "knobs", "arms", "timed", "ns_per_call_median", "ns_per_call_min",
//                 "wall_ns_per_call_median", "baseline_ns", "allocations_per_call",
//                 "allocations_per_report", ...}]}
// where the allocations are counted in one more repetition after the timed ones (the steady state:
// heap allocations per getCollInfo, and per latency report), through the benchmark's own malloc.
// and with --write-costs FILE writes the per-call costs that scoring "as deployed" charges
// (data/plugin_call_costs.csv, which the library compiles in; deployed/deployed_cost.hpp; slot mode
// only).
// With --leader RANKS, every live policy also paced, in local mode and in leader mode side by side
// (plugin_bench/leader_overhead.hpp: RANKS processes on loopback, each call timed alone and followed
// by a pause of --pause-us, default 20, at most 5,000 calls per repetition), one row per role ("role":
// "local", "leader" for rank 0, "follower" for the costliest follower); scoring as deployed does not
// charge them, so --write-costs refuses --leader.
// With --only NAME only the cases of policy NAME (its registry name, e.g. osub) are timed, for a
// profiler's run.
// Usage: plugin_overhead_bench PLUGIN.so [calls_per_repetition] [repetitions] [--knobs LISTS]
//        [--leader RANKS [--pause-us US]] [--write-costs FILE] [--only NAME]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "ncclbot/bench/harness.hpp"
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/core/name_table.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "plugin/kernel_channel_event.hpp"
#include "plugin/knob_choice.hpp"
#include "plugin/loaded_tuner.hpp"
#include "plugin_bench/allocation_counter.hpp"
#include "plugin_bench/leader_overhead.hpp"

namespace {

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

// The paced cases' calls per repetition at most: each call is followed by a pause.
constexpr long kMaxPacedCalls = 5000;

struct Case {
  std::string mode;
  std::string policy;
  bool feedback;      // a latency reported after every call, so the policy's state keeps changing
  std::string knobs;  // knob mode's lists; empty: slot mode
  // Knob mode: each timed call is getCollInfo, NCCL's pick and the getChunkSize NCCL then makes;
  // false: getCollInfo alone (no chunk is ever asked, so no chunk arm is credited as handed over).
  bool chunk_calls = true;
  bool profiler = false;  // each call's profiler events too, which deliver its latency
};

struct CaseResult {
  Case c;
  double median_ns, min_ns, wall_median_ns;
  // Heap allocations per call in one more repetition after the timed ones (steady state), and per
  // latency report after it (NCCL's profiler thread would make those).
  double allocations_per_call = 0, allocations_per_report = 0;
  size_t arms = 0;  // knob mode: the context's arms
};

// Off, table mode (what a supervised selector deploys as), every live policy at its defaults with
// feedback (the costs a study scoring "as deployed" charges per call), and UCB1 without feedback.
std::vector<Case> overhead_cases() {
  std::vector<Case> cases = {{"off", "", false, ""}, {"table", "", false, ""}};
  for (ncclbot::PolicyKind kind : ncclbot::live_policies())
    cases.push_back({"online", ncclbot::default_policy_spec(kind), true, ""});
  const std::string ucb1 = ncclbot::default_policy_spec(ncclbot::PolicyKind::kUcb1);
  cases.push_back({"online", ucb1, false, ""});
  cases.push_back({"online", ucb1, false, "", false, true});
  cases.push_back({"online", ucb1 + "@watch", false, "", false, true});
  return cases;
}

// Every live policy with feedback over the knob arms of `knobs`: getCollInfo with the getChunkSize
// NCCL then makes, and getCollInfo alone.
std::vector<Case> knob_cases(const std::string& knobs) {
  std::vector<Case> cases;
  for (ncclbot::PolicyKind kind : ncclbot::live_policies())
    for (bool chunk_calls : {true, false})
      cases.push_back({"online", ncclbot::default_policy_spec(kind), true, knobs, chunk_calls});
  return cases;
}

// The knob arms the bench's table gives a context: its usable slots crossed with `knobs`.
size_t knob_arm_count(const Table& base, const std::string& knobs) {
  ncclbot::ArmMask usable;
  for (int s = 0; s < ncclbot::kNumNcclArms; ++s)
    if (base.t[s / 3][s % 3] >= 0.0f) usable.set(s);
  return ncclbot::context_knob_arms(usable, ncclbot::parse_knob_spec(knobs)).size();
}

// The decision table table mode reads: one row per size class of a sweep's contexts, the row the
// calls match last, so a lookup scans them all. Returns its path ("" when it cannot be written).
std::string write_overhead_table() {
  char path[] = "/tmp/ncclbot-overhead-table-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  std::string table = "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
  for (int k = 0; k < 24; ++k) {
    const size_t bytes = size_t(1) << (k == 23 ? 20 : k == 20 ? 23 : k);  // 1 MiB last
    table += "*,allreduce,*,*," + std::to_string(bytes) + "," + std::to_string(bytes) + ",Ring,LL\n";
  }
  const bool ok = write(fd, table.data(), table.size()) == ssize_t(table.size());
  close(fd);
  if (!ok) unlink(path);
  return ok ? path : "";
}

// The copy of the cost table alone: what NCCL pays anyway to fill its table.
double baseline_ns(const Table& base, long calls, int reps) {
  const ncclbot::BenchTiming t = ncclbot::measure(
      [&] {
        for (long i = 0; i < calls; ++i) {
          Table t = base;
          sink = t.t[i % 7][i % 3];
        }
      },
      ncclbot::BenchSettings{0, reps, {}});
  return t.median_thread_cpu_s * 1e9 / double(calls);
}

// NCCL's activation mask: one int for the process, whose address every profiler init gets.
int nccl_event_mask = 0;

// One collective as NCCL 2.29-2.30 drives the plugin: the mask loaded at its API call, its CollApi
// event, getCollInfo, its Coll event (NCCL's pick) and, when the mask held KernelCh, two channels.
void profiled_call(const ncclbot::plugin::LoadedTuner& loaded, void* tuner, void* prof, const Table& base,
                   uint64_t clock_ns) {
  const NcclProfilerV6& p = *loaded.profiler6;
  const int mask = __atomic_load_n(&nccl_event_mask, __ATOMIC_RELAXED);
  void* api = nullptr;
  NcclProfilerEventDescrV6 d;
  if (mask & int(kNcclProfileCollApi)) {
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileCollApi;
    d.collApi.func = "AllReduce";
    d.collApi.count = (size_t(1) << 20) / 4;
    d.collApi.datatype = "ncclFloat32";
    p.startEvent(prof, &api, &d);
    if (api != nullptr) p.stopEvent(api);
  }
  Table t = base;
  loaded.tuner->getCollInfo(tuner, 4, size_t(1) << 20, 1, reinterpret_cast<float**>(t.t), 7, 3, 0, nullptr);
  const int pick = ncclbot::nccl_argmin(ncclbot::ArmMask{(1u << ncclbot::kNumNcclArms) - 1},
                                        [&](int s) { return t.t[s / 3][s % 3]; });
  std::memset(&d, 0, sizeof d);
  d.type = kNcclProfileColl;
  d.parentObj = api;
  d.coll.func = "AllReduce";
  d.coll.count = (size_t(1) << 20) / 4;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2;
  d.coll.algo = ncclbot::kAlgoNames[pick / 3].data();  // string literals: NUL-terminated
  d.coll.proto = ncclbot::kProtoNames[pick % 3].data();
  void* coll = nullptr;
  p.startEvent(prof, &coll, &d);
  if (coll != nullptr) p.stopEvent(coll);
  if (!(mask & int(kNcclProfileKernelCh))) return;
  for (int ch = 0; ch < 2; ++ch) {
    d = ncclbot::plugin::kernel_channel_start<NcclProfilerEventDescrV6>(coll, ch, clock_ns);
    void* h = nullptr;
    p.startEvent(prof, &h, &d);
    NcclProfilerEventStateArgs args;
    std::memset(&args, 0, sizeof args);
    args.kernelCh.pTimer = clock_ns + 10000 + uint64_t(pick) * 1000;
    p.recordEventState(h, kNcclProfilerKernelChStop, &args);
    p.stopEvent(h);
  }
}

// A profiler case: `calls` profiled calls `reps` times on a communicator of its own (profiler init
// first, as NCCL does), then one more repetition with the allocations counted.
CaseResult time_profiler_case(const ncclbot::plugin::LoadedTuner& loaded, const Case& c, uint64_t comm,
                              const Table& base, long calls, int reps) {
  setenv("NCCLBOT_MODE", c.mode.c_str(), 1);
  setenv("NCCLBOT_POLICY", c.policy.c_str(), 1);
  setenv("NCCLBOT_KNOBS", "", 1);
  void* prof = nullptr;
  void* tuner = nullptr;
  loaded.profiler6->init(&prof, comm, &nccl_event_mask, "bench", 1, 1, 0, nullptr);
  loaded.tuner->init(&tuner, comm, 1, 1, nullptr, nullptr, nullptr);
  uint64_t clock = 1000000;
  const auto repetition = [&] {
    for (long i = 0; i < calls; ++i, clock += 100000) profiled_call(loaded, tuner, prof, base, clock);
  };
  const ncclbot::BenchTiming t = ncclbot::measure(repetition, ncclbot::BenchSettings{0, reps, nullptr});
  ncclbot::bench::start_counting_allocations();
  repetition();
  const uint64_t allocations = ncclbot::bench::stop_counting_allocations();
  loaded.tuner->finalize(tuner);
  loaded.profiler6->finalize(prof);
  const double per_call = 1e9 / double(calls);
  CaseResult r{c, t.median_thread_cpu_s * per_call, t.min_thread_cpu_s * per_call, t.median_s * per_call};
  r.allocations_per_call = double(allocations) / double(calls);
  return r;
}

// Times `calls` getCollInfo calls of one case `reps` times on a communicator of its own; with
// feedback, a latency report per call after each repetition (NCCL makes them on its proxy thread,
// not in getCollInfo, so they are timed apart, here not at all).
CaseResult time_case(const ncclbot::plugin::LoadedTuner& loaded, const Case& c, uint64_t comm,
                     const Table& base, long calls, int reps) {
  if (c.profiler) return time_profiler_case(loaded, c, comm, base, calls, reps);
  setenv("NCCLBOT_MODE", c.mode.c_str(), 1);
  setenv("NCCLBOT_POLICY", c.policy.c_str(), 1);
  setenv("NCCLBOT_KNOBS", c.knobs.c_str(), 1);
  void* ctx = nullptr;
  // Knob mode binds tuner v6, as NCCL 2.30 does, so that getChunkSize is asked.
  const NcclTunerV6* v6 = c.knobs.empty() ? nullptr : loaded.tuner6;
  // The plugin's init allocates its communicator: that the count sees it proves the plugin's
  // allocations reach the counter (else the zeros below would mean nothing).
  ncclbot::bench::start_counting_allocations();
  if (v6)
    v6->init(&ctx, comm, 1, 1, nullptr, nullptr, nullptr);
  else
    loaded.tuner->init(&ctx, comm, 1, 1, nullptr, nullptr, nullptr);
  if (ncclbot::bench::stop_counting_allocations() == 0) {
    std::fprintf(stderr,
                 "plugin_overhead_bench: the plugin's init allocated nothing this benchmark saw: "
                 "its allocations do not reach the counter\n");
    std::exit(1);
  }
  const NcclTunerV6* chunk_calls = c.chunk_calls ? v6 : nullptr;
  const auto calls_of_one_repetition = [&] {
    for (long i = 0; i < calls; ++i) {
      Table t = base;
      int channels = 0;
      loaded.tuner->getCollInfo(ctx, 4, size_t(1) << 20, 1, reinterpret_cast<float**>(t.t), 7, 3, 0,
                                &channels);
      sink = t.t[1][0];
      if (chunk_calls) {  // NCCL's next tuner call for the collective: the chunk of the arm it runs (its
                          // pick, a
                          // scan of the 21 entries, is timed with it)
        const int pick = ncclbot::nccl_argmin(ncclbot::ArmMask{(1u << ncclbot::kNumNcclArms) - 1},
                                              [&](int s) { return t.t[s / 3][s % 3]; });
        size_t chunk = size_t(1) << 22;
        chunk_calls->getChunkSize(ctx, 4, (size_t(1) << 20) / size_t(channels > 0 ? channels : 2), pick / 3,
                                  pick % 3, 1, &chunk);
        sink = float(chunk);
      }
    }
  };
  const auto reports = [&] {
    for (long i = 0; i < calls; i += 1)
      loaded.report(comm, 1, 1, 4, size_t(1) << 20, 1, int(i % 3), 10.0 + i % 7);
  };
  const ncclbot::BenchTiming t = ncclbot::measure(
      calls_of_one_repetition,
      ncclbot::BenchSettings{0, reps, c.feedback ? std::function<void()>(reports) : nullptr});
  ncclbot::bench::start_counting_allocations();
  calls_of_one_repetition();
  const uint64_t call_allocations = ncclbot::bench::stop_counting_allocations();
  uint64_t report_allocations = 0;
  if (c.feedback) {
    ncclbot::bench::start_counting_allocations();
    reports();
    report_allocations = ncclbot::bench::stop_counting_allocations();
  }
  loaded.tuner->finalize(ctx);
  const double per_call = 1e9 / double(calls);
  CaseResult r{c, t.median_thread_cpu_s * per_call, t.min_thread_cpu_s * per_call, t.median_s * per_call};
  r.allocations_per_call = double(call_allocations) / double(calls);
  r.allocations_per_report = double(report_allocations) / double(calls);
  return r;
}

std::string results_json(const std::vector<CaseResult>& results, long calls, int reps, double baseline) {
  std::string json = "{\"results\": [";
  for (size_t k = 0; k < results.size(); ++k) {
    const CaseResult& r = results[k];
    char line[1024];
    std::snprintf(
        line, sizeof line,
        "%s{\"mode\": \"%s\", \"policy\": \"%s\", \"knobs\": \"%s\", \"arms\": %zu, \"feedback\": %s, "
        "\"timed\": \"%s\", \"calls\": %ld, \"repetitions\": %d, "
        "\"ns_per_call_median\": %.1f, \"ns_per_call_min\": %.1f, \"wall_ns_per_call_median\": %.1f, "
        "\"baseline_ns\": %.1f, \"allocations_per_call\": %.4f, \"allocations_per_report\": %.4f}",
        k ? ", " : "", r.c.mode.c_str(), r.c.policy.c_str(), r.c.knobs.c_str(), r.arms,
        r.c.feedback ? "true" : "false",
        r.c.profiler                            ? "getCollInfo+profiler events"
        : r.c.knobs.empty() || !r.c.chunk_calls ? "getCollInfo"
                                                : "getCollInfo+pick+getChunkSize",
        calls, reps, r.median_ns, r.min_ns, r.wall_median_ns, baseline, r.allocations_per_call,
        r.allocations_per_report);
    json += line;
  }
  return json + "]}";
}

// A policy measured in local and leader mode the same way (plugin_bench/leader_overhead.hpp).
struct PacedCases {
  ncclbot::bench::PacedCaseResult local, leader;
};

// The paced rows: per policy its local process, then leader mode's leader and costliest follower.
std::string paced_rows_json(const std::vector<PacedCases>& cases, long calls, int reps) {
  std::string json;
  for (const PacedCases& c : cases)
    for (const auto& [mode, role, ranks, cost] :
         {std::tuple{"local", "local", 1, c.local.rank0},
          std::tuple{"leader", "leader", c.leader.ranks, c.leader.rank0},
          std::tuple{"leader", "follower", c.leader.ranks, c.leader.follower}}) {
      char line[1024];
      std::snprintf(
          line, sizeof line,
          ", {\"mode\": \"%s\", \"role\": \"%s\", \"ranks\": %d, \"policy\": \"%s\", "
          "\"feedback\": true, \"timed\": \"getCollInfo, paced\", \"calls\": %ld, \"repetitions\": %d, "
          "\"ns_per_call_median\": %.1f, \"ns_per_call_min\": %.1f, \"allocations_per_call\": %.4f}",
          mode, role, ranks, c.local.policy.c_str(), calls, reps, cost.median_ns, cost.min_ns,
          cost.allocations_per_call);
      json += line;
    }
  return json;
}

// The processor's name, for the costs file's provenance line.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown processor";
}

// data/plugin_call_costs.csv's form (deployed/deployed_cost.hpp parse_call_costs): table mode's median
// and every live policy's with feedback, by name; AUTO is left out (stock NCCL needs no plugin).
// Written atomically (io/output_file.hpp write_output_file: a half-written file never replaces the
// one the build compiles in); a path that cannot be written is a UsageError naming it.
void write_costs(const std::string& path, const std::vector<CaseResult>& results, const std::string& plugin,
                 long calls, int reps) {
  std::ostringstream out;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  out << "# What one getCollInfo of the built tuner plugin costs the job, per policy: the median thread-CPU\n"
         "# nanoseconds per call with a latency reported after every call (the live cost). `table` is table\n"
         "# mode on a 24-row decision table, what a supervised selector deploys as. `--as-deployed` charges\n"
         "# these on every call (docs/replay.md \"Scoring as deployed\"); the library compiles this file "
         "in.\n"
      << "# Written by: plugin_overhead_bench " << plugin << " " << calls << " " << reps << " --write-costs "
      << path << "\n"
      << "# Measured: " << date << ", " << cpu_model() << "\n"
      << "policy,ns_per_call\n"
      << std::fixed << std::setprecision(1);
  for (const CaseResult& r : results) {
    const std::string name = r.c.policy.substr(0, r.c.policy.find(':'));
    if (r.c.mode == "table")
      out << "table," << r.median_ns << "\n";
    else if (r.c.mode == "online" && r.c.feedback && name != "auto" && r.c.knobs.empty())
      out << name << "," << r.median_ns << "\n";
  }
  ncclbot::write_output_file(path, out.str(), "--write-costs");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string costs_path, knobs, only;
  std::optional<int64_t> leader_ranks_given = 0, pause_us_given = 20;  // nullopt: not a number
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--write-costs") == 0 && i + 1 < argc)
      costs_path = argv[++i];
    else if (std::strcmp(argv[i], "--leader") == 0 && i + 1 < argc)
      leader_ranks_given = ncclbot::parse_int(argv[++i]);
    else if (std::strcmp(argv[i], "--pause-us") == 0 && i + 1 < argc)
      pause_us_given = ncclbot::parse_int(argv[++i]);
    else if (std::strcmp(argv[i], "--knobs") == 0 && i + 1 < argc)
      knobs = argv[++i];
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else
      positional.push_back(argv[i]);
  }
  if (positional.empty() || positional.size() > 3) {
    std::fprintf(stderr,
                 "usage: %s PLUGIN.so [calls] [repetitions] [--knobs LISTS] [--leader RANKS [--pause-us US]] "
                 "[--write-costs FILE] [--only NAME]\n",
                 argv[0]);
    return 2;
  }
  if (!leader_ranks_given || !pause_us_given || *leader_ranks_given < 0 || *leader_ranks_given > 64 ||
      *pause_us_given < 0 || *pause_us_given > 1000000) {
    std::fprintf(stderr, "plugin_overhead_bench: --leader takes 2 to 64 ranks, --pause-us 0 to 10^6\n");
    return 2;
  }
  const int leader_ranks = int(*leader_ranks_given), pause_us = int(*pause_us_given);
  if (!only.empty() && !costs_path.empty()) {
    std::fprintf(stderr, "plugin_overhead_bench: --write-costs needs every case; drop --only\n");
    return 2;
  }
  if (leader_ranks != 0 && !costs_path.empty()) {  // the paced rows are not what scoring charges
    std::fprintf(stderr, "plugin_overhead_bench: --write-costs writes local mode's costs; drop --leader\n");
    return 2;
  }
  const long calls = positional.size() > 1 ? std::atol(positional[1].c_str()) : 1000000;
  const int reps = positional.size() > 2 ? std::atoi(positional[2].c_str()) : 7;
  if (calls < 1 || reps < 1) {
    std::fprintf(stderr, "plugin_overhead_bench: calls and repetitions must be positive integers\n");
    return 2;
  }
  // Leader mode first: its rank processes fork before this process loads the plugin.
  std::vector<PacedCases> paced;
  const long paced_calls = std::min(calls, kMaxPacedCalls);
  if (leader_ranks != 0) {
    if (leader_ranks < 2) {
      std::fprintf(stderr, "plugin_overhead_bench: --leader takes 2 to 64 ranks, --pause-us 0 to 10^6\n");
      return 2;
    }
    for (ncclbot::PolicyKind kind : ncclbot::live_policies()) {
      const std::string spec = ncclbot::default_policy_spec(kind);
      if (kind == ncclbot::PolicyKind::kAuto || (!only.empty() && spec.substr(0, spec.find(':')) != only))
        continue;
      PacedCases c{
          ncclbot::bench::time_paced_case(positional[0], spec, 1, paced_calls, reps, pause_us),
          ncclbot::bench::time_paced_case(positional[0], spec, leader_ranks, paced_calls, reps, pause_us)};
      for (const auto* r : {&c.local, &c.leader})
        if (!r->error.empty()) {
          std::fprintf(stderr, "plugin_overhead_bench: %s mode, %s: %s\n", r->ranks > 1 ? "leader" : "local",
                       spec.c_str(), r->error.c_str());
          return 1;
        }
      paced.push_back(c);
    }
  }
  const ncclbot::plugin::LoadedTuner loaded = ncclbot::plugin::load_tuner(positional[0].c_str());
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error.c_str());
    return 2;
  }
  if (!loaded.profiler6) {
    std::fprintf(stderr, "plugin_overhead_bench: %s lacks ncclProfiler_v6\n", positional[0].c_str());
    return 2;
  }
  const Table base = nccl_like_table();
  size_t knob_arms = 0;
  if (!knobs.empty()) {
    try {
      knob_arms = knob_arm_count(base, knobs);
    } catch (const ncclbot::UsageError& e) {
      std::fprintf(stderr, "plugin_overhead_bench: %s\n", e.what());
      return 2;
    }
    if (!loaded.tuner6) {
      std::fprintf(stderr, "plugin_overhead_bench: --knobs needs the plugin's ncclTunerPlugin_v6\n");
      return 2;
    }
  }
  const double baseline = baseline_ns(base, calls, reps);
  const std::string table_path = write_overhead_table();
  if (table_path.empty()) {
    std::fprintf(stderr, "plugin_overhead_bench: cannot write the decision table in /tmp\n");
    return 2;
  }
  setenv("NCCLBOT_TABLE", table_path.c_str(), 1);
  std::vector<Case> cases = overhead_cases();
  if (!knobs.empty())
    for (const Case& c : knob_cases(knobs)) cases.push_back(c);
  if (!only.empty()) {
    std::erase_if(cases, [&](const Case& c) { return c.policy.substr(0, c.policy.find(':')) != only; });
    if (cases.empty()) {
      std::fprintf(stderr, "plugin_overhead_bench: --only %s: no live policy of that name\n", only.c_str());
      return 2;
    }
  }
  std::vector<CaseResult> results;
  for (size_t k = 0; k < cases.size(); ++k) {
    results.push_back(time_case(loaded, cases[k], 4242 + k, base, calls, reps));
    if (!cases[k].knobs.empty()) results.back().arms = knob_arms;
  }
  unlink(table_path.c_str());
  std::string json = results_json(results, calls, reps, baseline);
  json.insert(json.size() - 2, paced_rows_json(paced, paced_calls, reps));  // before the closing "]}"
  std::printf("%s\n", json.c_str());
  if (!costs_path.empty()) {
    try {
      write_costs(costs_path, results, positional[0], calls, reps);
    } catch (const ncclbot::UsageError& e) {
      std::fprintf(stderr, "plugin_overhead_bench: %s\n", e.what());
      return 2;
    }
  }
  return 0;
}
