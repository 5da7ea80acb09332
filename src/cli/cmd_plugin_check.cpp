// `ncclbot plugin-check --plugin PATH --sweep S --policy SPEC --seed N [--horizon T] [--ranks N]`:
// loads the built tuner plugin as NCCL does (dlopen RTLD_NOW | RTLD_LOCAL, the versioned v5
// structs) and checks that, driven with the sweep, it makes the replay engine's decisions call for
// call:
//   for every context: one communicator (tuner + profiler init), then T calls of
//     cost table = the sweep's prior on the measured arms, -1 elsewhere (NCCL's layout) ->
//     getCollInfo -> the pick by NCCL's rule (smallest non-negative, strict <, row-major) ->
//     compare with the replay's step t -> latency of the picked arm drawn from the sweep with the
//     replay's Philox keying -> fed back through profiler events (Coll + KernelCh with GPU
//     timestamps), or through ncclbotReportLatency when nanosecond timestamps cannot carry it exactly.
// With --ranks N (2..64) it checks leader mode instead, the plugin as a multi-rank job runs it: for
// every context, N processes each dlopen the plugin with NCCLBOT_LEADER on loopback (process 0 the
// leader), hold the communicator's nodes x GPUs-per-node ranks between them (process 0 rank 0
// alone, as a job's leader process drives one GPU) and play T calls in lockstep, every rank's
// latency reported through ncclbotReportLatency before the next call; every rank's every decision
// is compared with the replay of the leader's protocol (--as-deployed leader: delay
// kLeaderPrefetch, window kLeaderWindow, policy start kLeaderStart).
// Exit 0 only when every decision is equal; 1 when any differs (each printed with context and step,
// and rank with --ranks) or a rank's process fails or hangs (named in the error).
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "cli/command.hpp"
#include "cli/random_key.hpp"
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"

namespace ncclbot::cli {
namespace plugin_check_command {

struct PluginCheckOptions {
  std::string plugin_path, sweep_path, policy;
  uint64_t seed = 0;
  int horizon = 200;
  int delay = 0;
  std::string nodes, collectives, feed = "auto";
  int max_reports = 20;
  std::string log_path;
  bool json = false;
  int ranks = 1;                        // processes; > 1: leader mode (the file comment)
  double rank_timeout = 300;            // seconds one context's processes may take, with --ranks
  std::vector<std::string> plugin_env;  // NAME=VALUE set for the plugin after plugin-check's own
};

struct LoadedPlugin {
  void* handle = nullptr;
  const NcclTunerV5* tuner = nullptr;
  const NcclProfilerV5* profiler = nullptr;
  ncclbotReportLatency_t report = nullptr;
};

LoadedPlugin load_plugin(const std::string& path) {
  LoadedPlugin p;
  p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle) throw UsageError("--plugin: cannot load '" + path + "': " + dlerror());
  p.tuner = static_cast<const NcclTunerV5*>(dlsym(p.handle, "ncclTunerPlugin_v5"));
  p.profiler = static_cast<const NcclProfilerV5*>(dlsym(p.handle, "ncclProfiler_v5"));
  p.report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(p.handle, "ncclbotReportLatency"));
  if (!p.tuner || !p.tuner->init || !p.tuner->getCollInfo || !p.tuner->finalize)
    throw UsageError("--plugin: '" + path + "' exports no usable ncclTunerPlugin_v5");
  if (!p.profiler)
    throw UsageError("--plugin: '" + path + "' exports no ncclProfiler_v5 (the feedback path)");
  return p;
}

// The replay's draw of step t (replay/replay.hpp): word t of the (seed, stream id) Philox stream
// picks one of the arm's R samples.
float replay_draw(const SweepView& v, int c, int slot, uint64_t seed, uint64_t stream_id, int t) {
  const Philox4x32 block =
      philox4x32_10(Philox4x32{{uint32_t(t) >> 2, 0u, uint32_t(stream_id), uint32_t(stream_id >> 32)}},
                    uint32_t(seed), uint32_t(seed >> 32));
  const uint32_t r = uniform_below(block.v[t & 3], uint32_t(v.samples));
  return v.sample(c, slot, int(r));
}

// Names as NCCL's profiler spells them.
const char* profiler_func_name(Collective c) {
  switch (c) {
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    default:
      return "AllReduce";
  }
}

struct Mismatch {
  int context = 0, step = 0, plugin_slot = -1, replay_slot = -1;
  int rank = -1;  // the communicator rank, with --ranks
};

struct ContextOutcome {
  bool checked = false;
  std::string skipped;  // why, when not checked
  int steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
  int rank_disagreements = 0;  // with --ranks: calls on which the ranks did not all play one arm
  std::vector<Mismatch> mismatches;
  std::string failure;  // with --ranks: a rank process crashed, gave up or hung (nothing compared)
};

std::string slot_label(int slot) {
  if (slot < 0) return "none";
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
}

// NCCL's cost table of context c: the model's time on every arm it could run, -1 on the others.
// false, with the reason in `skipped`, when the context cannot be checked call for call.
struct CostTable7x3 {
  float t[kNumNcclAlgos][kNumProtos];
};
bool context_cost_table(const SweepView& v, int c, CostTable7x3* table, std::string* skipped) {
  const ArmMask mask = v.mask(c);
  if (mask.nccl_arms() != mask) {
    // A simulated arm (HiPIPE) has no row in NCCL's table: the replay could pick what the plugin
    // cannot, so there is nothing to compare call for call.
    *skipped = "the sweep has the simulated HiPIPE arm, which NCCL's cost table cannot hold";
    return false;
  }
  for (int s = 0; s < kNumNcclArms; ++s) {
    const float p = v.prior(c, s);
    // An arm that was measured but has no prediction cannot be expressed in a cost table.
    if (mask.has(s) && !(p >= 0.0f && std::isfinite(p))) {
      *skipped = "arm " + slot_label(s) + " was measured but has no prior_us";
      return false;
    }
    table->t[s / kNumProtos][s % kNumProtos] = mask.has(s) ? p : -1.0f;
  }
  return true;
}

// The reference: the replay engine's own steps (replay_one, the code the CPU engine runs), each
// step's slot and observed latency.
struct ReplayReference {
  uint64_t stream_id = 0;
  std::vector<int> slots;
  std::vector<float> latency;
};
ReplayReference replay_reference(const SweepView& v, const Context& ctx, int c, const PolicySpec& spec,
                                 const PluginCheckOptions& opt, int delay, int window, int policy_start) {
  ReplayTask task;
  task.sweep = v;
  task.context = c;
  task.seed = opt.seed;
  task.stream_id = context_stream_id(ctx);
  task.horizon = opt.horizon;
  task.delay = delay;
  task.window = window;
  task.policy_start = policy_start;
  ReplayReference ref;
  ref.stream_id = task.stream_id;
  ref.slots.assign(size_t(opt.horizon), -1);
  ref.latency.assign(size_t(opt.horizon), 0.0f);
  visit_policy(spec.config, [&](auto& policy) {
    replay_one(policy, task, [&](int t, int slot, float x) {
      ref.slots[size_t(t)] = slot;
      ref.latency[size_t(t)] = x;
    });
    return 0;
  });
  return ref;
}

// Call t's latency of `ns` nanoseconds, fed back through NCCL's profiler events as NCCL emits
// them: a Coll event (`count` per rank, int8 so count = bytes), stopped when "enqueued", then two
// kernel channels whose slower one spans the latency, with GPU timestamps from `clock_ns`, which
// moves past them.
void feed_profiler_events(const NcclProfilerV5& profiler, void* prof, Collective collective, size_t count,
                          int t, int pick, long long ns, uint64_t& clock_ns) {
  NcclProfilerEventDescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = kNcclProfileColl;
  d.rank = 0;
  d.coll.seqNumber = uint64_t(t);
  d.coll.func = profiler_func_name(collective);
  d.coll.count = count;
  d.coll.datatype = "ncclInt8";
  d.coll.nChannels = 2;
  d.coll.nWarps = 16;
  const std::string algo(algo_name(slot_algo(pick))), proto(proto_name(slot_proto(pick)));
  d.coll.algo = algo.c_str();
  d.coll.proto = proto.c_str();
  void* coll = nullptr;
  profiler.startEvent(prof, &coll, &d);
  profiler.stopEvent(coll);
  const uint64_t span[2] = {uint64_t(ns) / 2, uint64_t(ns)};
  for (int ch = 0; ch < 2; ++ch) {
    NcclProfilerEventDescrV5 k;
    std::memset(&k, 0, sizeof k);
    k.type = kNcclProfileKernelCh;
    k.parentObj = coll;
    k.kernelCh.channelId = uint8_t(ch);
    k.kernelCh.pTimer = clock_ns + uint64_t(ch) * 7;
    void* h = nullptr;
    profiler.startEvent(prof, &h, &k);
    NcclProfilerEventStateArgs args;
    args.kernelCh.pTimer = k.kernelCh.pTimer + span[ch];
    profiler.recordEventState(h, kNcclProfilerKernelChStop, &args);
    profiler.stopEvent(h);
  }
  clock_ns += uint64_t(ns) + 1000;
}

// The arm NCCL runs for one call: the tuner edits a copy of the cost table, then NCCL's rule picks.
int tuner_pick(const NcclTunerV5& plugin_tuner, void* comm, const Context& ctx,
               const float (&table)[kNumNcclAlgos][kNumProtos]) {
  float call_table[kNumNcclAlgos][kNumProtos];
  std::memcpy(call_table, table, sizeof table);
  int channels = 0;
  plugin_tuner.getCollInfo(comm, int(ctx.collective), size_t(ctx.bytes), 1,
                           reinterpret_cast<float**>(call_table), kNumNcclAlgos, kNumProtos, 0, &channels);
  return nccl_argmin(ArmMask{(1u << kNumNcclArms) - 1},
                     [&](int s) { return call_table[s / kNumProtos][s % kNumProtos]; });
}

// Local mode: context c's communicator driven in this process, every decision compared with the
// replay's.
ContextOutcome check_context(const LoadedPlugin& plugin, const Sweep& sweep, int c, const PolicySpec& spec,
                             const PluginCheckOptions& opt, const std::string& feed) {
  ContextOutcome out;
  const SweepView v = sweep.view();
  const Context& ctx = sweep.context(c);
  CostTable7x3 cost;
  if (!context_cost_table(v, c, &cost, &out.skipped)) return out;
  const auto& table = cost.t;
  const int ranks = ctx.nodes * ctx.gpus_per_node;
  const bool per_rank_count =
      ctx.collective == Collective::kAllGather || ctx.collective == Collective::kReduceScatter;
  const bool bytes_fit_descriptor = !per_rank_count || ctx.bytes % uint64_t(ranks) == 0;

  const ReplayReference ref = replay_reference(v, ctx, c, spec, opt, opt.delay, 1, 0);
  const std::vector<int>& replay_slots = ref.slots;
  const std::vector<float>& replay_latency = ref.latency;

  // One communicator per context, with an id of its own; the profiler is initialised first, as
  // NCCL does.
  const uint64_t comm_id = 0x6e63636c62000000ull + uint64_t(c);
  void* prof = nullptr;
  void* tuner = nullptr;
  int mask_bits = 0;
  plugin.profiler->init(&prof, comm_id, &mask_bits, "plugin-check", ctx.nodes, ranks, 0, nullptr);
  plugin.tuner->init(&tuner, comm_id, size_t(ranks), size_t(ctx.nodes), nullptr, nullptr, nullptr);
  out.checked = true;
  uint64_t clock_ns = 1000000;
  // A call's latency goes back to the plugin as NCCL's profiler would deliver it, `delay` calls
  // late: after call t + D is decided and before call t + D + 1 (replay/replay.hpp).
  auto report_latency = [&](int t, int pick, float x) {
    const long long ns = std::llround(double(x) * 1000.0);
    const bool exact_in_ns = ns > 0 && float(double(ns) / 1000.0) == x;
    const bool use_profiler = feed == "profiler" || (feed == "auto" && exact_in_ns && bytes_fit_descriptor);
    if (use_profiler) {
      feed_profiler_events(*plugin.profiler, prof, ctx.collective,
                           size_t(per_rank_count ? ctx.bytes / uint64_t(ranks) : ctx.bytes), t, pick, ns,
                           clock_ns);
      ++out.via_profiler;
    } else {
      if (!plugin.report)
        throw UsageError("--plugin exports no ncclbotReportLatency, needed for --feed report");
      const int rc = plugin.report(comm_id, ranks, ctx.nodes, int(ctx.collective), size_t(ctx.bytes),
                                   int(slot_algo(pick)), int(slot_proto(pick)), double(x));
      if (rc != 0) ++out.not_joined;
      ++out.via_report;
    }
  };
  std::deque<std::tuple<int, int, float>> in_flight;
  for (int t = 0; t < opt.horizon; ++t) {
    const int pick = tuner_pick(*plugin.tuner, tuner, ctx, table);
    ++out.steps;
    if (pick != replay_slots[size_t(t)]) {
      out.mismatches.push_back({c, t, pick, replay_slots[size_t(t)]});
      break;  // later steps follow from different observations
    }
    // The latency the call observed: the replay's draw, re-derived here as a check; with call
    // dynamics (levels, warm-up) it is the replay core's observed value.
    const float x =
        v.dynamic() ? replay_latency[size_t(t)] : replay_draw(v, c, pick, opt.seed, ref.stream_id, t);
    if (std::memcmp(&x, &replay_latency[size_t(t)], sizeof x) != 0)
      throw std::runtime_error("plugin-check's draw differs from the replay's at context " +
                               std::to_string(c) + " step " + std::to_string(t));
    in_flight.emplace_back(t, pick, x);
    if (int(in_flight.size()) > opt.delay) {
      const auto [u, u_pick, u_x] = in_flight.front();
      in_flight.pop_front();
      report_latency(u, u_pick, u_x);
    }
  }
  plugin.tuner->finalize(tuner);
  plugin.profiler->finalize(prof);
  return out;
}

// --ranks N: leader mode, the plugin in N processes on loopback (the file comment).

inline constexpr int kMaxCheckRanks = 64;

// What one context's processes share (one MAP_SHARED mapping), followed by every rank's decisions,
// rank-major: decisions[rank * T + t], the arm the rank's call t ran (NCCL's rule on the table the
// plugin returned).
struct RankProcessState {
  std::atomic<int64_t> call{-1};   // the call it is playing: -1 while loading the plugin and initialising
  std::atomic<int> not_joined{0};  // rank 0: reports the plugin did not join to a decision
  char error[512] = {};            // why it gave up (exit status 3)
};
struct RanksShared {
  pthread_barrier_t barrier;
  RankProcessState procs[kMaxCheckRanks];
};

// Everything a context's processes read, set before they are forked.
struct RanksJob {
  const PluginCheckOptions* opt = nullptr;
  const SweepView* v = nullptr;
  const Context* ctx = nullptr;
  int c = 0;
  const CostTable7x3* table = nullptr;
  const ReplayReference* ref = nullptr;
  int comm_ranks = 0;           // nodes x GPUs per node
  std::vector<int> first_rank;  // process p holds communicator ranks [first_rank[p], first_rank[p + 1])
  uint64_t comm_id = 0;
  std::string policy, address, secret;
  RanksShared* shared = nullptr;
  int8_t* decisions = nullptr;
};

// "rank process 0 (NCCLBOT_RANK=0, communicator rank 0, the leader)" and the like.
std::string process_label(const RanksJob& job, int p) {
  const int first = job.first_rank[size_t(p)], last = job.first_rank[size_t(p) + 1] - 1;
  std::string s = "rank process " + std::to_string(p) + " (NCCLBOT_RANK=" + std::to_string(p) + ", ";
  if (first == last)
    s += "communicator rank " + std::to_string(first);
  else
    s += "communicator ranks " + std::to_string(first) + ".." + std::to_string(last);
  return s + (p == 0 ? ", the leader)" : ")");
}

// The plugin's warnings in a rank process, each said once, on stderr with the process named.
std::mutex g_rank_log_mu;
std::string g_rank_log_prefix;
std::set<std::string> g_rank_log_seen;

void rank_logger(int level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level != kNcclLogWarn) return;
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(g_rank_log_mu);
  if (!g_rank_log_seen.insert(buf).second) return;
  const std::string line = g_rank_log_prefix + buf + "\n";
  if (::write(2, line.data(), line.size()) < 0) return;
}

// Sets NAME=VALUE from --plugin-env (after plugin-check's own settings, so it wins).
void apply_plugin_env(const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) {
    const size_t eq = a.find('=');
    setenv(a.substr(0, eq).c_str(), a.substr(eq + 1).c_str(), 1);
  }
}

// One rank process: loads the plugin as NCCL does, initialises its communicator ranks, plays the
// context's calls in lockstep with the other processes, and writes each rank's decisions. Never
// returns; exit status 3 with `error` set when it gives up.
[[noreturn]] void rank_process(const RanksJob& job, int p) {
  RankProcessState& me = job.shared->procs[p];
  auto fail = [&](const std::string& why) {
    std::snprintf(me.error, sizeof me.error, "%s", why.c_str());
    _exit(3);
  };
  const PluginCheckOptions& opt = *job.opt;
  for (const char* name : {"NCCLBOT_STATE", "NCCLBOT_TABLE", "NCCLBOT_LOG", "NCCLBOT_LOG_RANKS",
                           "NCCLBOT_AGREEMENT", "NCCLBOT_LEADER_SECRET_FILE"})
    unsetenv(name);
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", job.policy.c_str(), 1);
  setenv("NCCLBOT_SEED", std::to_string(opt.seed).c_str(), 1);
  setenv("NCCLBOT_RANK", std::to_string(p).c_str(), 1);
  setenv("NCCLBOT_LEADER", job.address.c_str(), 1);
  setenv("NCCLBOT_LEADER_SECRET", job.secret.c_str(), 1);
  setenv("NCCLBOT_LEADER_TIMEOUT_MS", "20000", 1);
  apply_plugin_env(opt.plugin_env);
  g_rank_log_prefix = "plugin-check: context " + std::to_string(job.c) + ", " + process_label(job, p) + ": ";

  void* handle = dlopen(opt.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail(std::string("cannot load the plugin: ") + dlerror());
  const auto* tuner = static_cast<const NcclTunerV5*>(dlsym(handle, "ncclTunerPlugin_v5"));
  const auto report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(handle, "ncclbotReportLatency"));
  if (!tuner || !tuner->init || !tuner->getCollInfo || !tuner->finalize || !report)
    fail("the plugin exports no usable ncclTunerPlugin_v5 and ncclbotReportLatency");
  const Context& ctx = *job.ctx;
  const SweepView& v = *job.v;
  const ReplayReference& ref = *job.ref;
  const int first = job.first_rank[size_t(p)], count = job.first_rank[size_t(p) + 1] - first;
  std::vector<void*> comms(size_t(count), nullptr);
  for (int k = 0; k < count; ++k)
    if (tuner->init(&comms[size_t(k)], job.comm_id, size_t(job.comm_ranks), size_t(ctx.nodes), rank_logger,
                    nullptr, nullptr) != 0)
      fail("the tuner's init of communicator rank " + std::to_string(first + k) + " failed");
  pthread_barrier_wait(&job.shared->barrier);  // communicator init is collective
  const int horizon = opt.horizon;
  for (int t = 0; t < horizon; ++t) {
    me.call.store(t, std::memory_order_relaxed);
    for (int k = 0; k < count; ++k) {
      CostTable7x3 call = *job.table;
      int channels = 0;
      tuner->getCollInfo(comms[size_t(k)], int(ctx.collective), size_t(ctx.bytes), 1,
                         reinterpret_cast<float**>(call.t), kNumNcclAlgos, kNumProtos, 0, &channels);
      const int pick = nccl_argmin(ArmMask{(1u << kNumNcclArms) - 1},
                                   [&](int s) { return call.t[s / kNumProtos][s % kNumProtos]; });
      job.decisions[size_t(first + k) * size_t(horizon) + size_t(t)] = int8_t(pick);
      if (pick < 0) continue;  // no arm left usable: nothing ran
      // The latency the call observed, drawn as the local check draws it; every rank reports its
      // own (the plugin learns from the leader's alone), before the next call: none in flight.
      const float x =
          v.dynamic() ? ref.latency[size_t(t)] : replay_draw(v, job.c, pick, opt.seed, ref.stream_id, t);
      if (pick == ref.slots[size_t(t)] && std::memcmp(&x, &ref.latency[size_t(t)], sizeof x) != 0)
        fail("plugin-check's draw differs from the replay's at step " + std::to_string(t));
      const int rc = report(job.comm_id, job.comm_ranks, ctx.nodes, int(ctx.collective), size_t(ctx.bytes),
                            int(slot_algo(pick)), int(slot_proto(pick)), double(x));
      if (first + k == 0 && rc != 0) me.not_joined.fetch_add(1, std::memory_order_relaxed);
    }
    pthread_barrier_wait(&job.shared->barrier);  // a collective: every rank's call t ends together
  }
  me.call.store(horizon, std::memory_order_relaxed);
  pthread_barrier_wait(&job.shared->barrier);  // every rank done before anyone finalises
  for (void* comm : comms) tuner->finalize(comm);
  _exit(0);
}

// Why process p ended as it did (`status` from waitpid), for the error.
std::string process_failure(const RanksJob& job, int p, int status) {
  const RankProcessState& st = job.shared->procs[p];
  const int64_t call = st.call.load();
  const std::string where =
      call < 0 ? "while loading the plugin or initialising its ranks"
               : "at call " + std::to_string(call) + " of " + std::to_string(job.opt->horizon);
  std::string s = process_label(job, p);
  if (WIFSIGNALED(status))
    s += " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
         ")";
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 3 && st.error[0] != '\0')
    s += " gave up: " + std::string(st.error, strnlen(st.error, sizeof st.error));
  else
    s += " exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return s + " " + where;
}

// Which communicator ranks each of `processes` processes holds (process p: [first[p], first[p + 1])).
// Process 0, the leader, holds rank 0 alone (a leader process holding two ranks of a communicator
// cannot tell their latencies apart, docs/plugin.md "Decision windows"); the others share the rest.
std::vector<int> first_ranks_of_processes(int comm_ranks, int processes) {
  std::vector<int> first_rank = {0, 1};
  for (int p = 1; p < processes; ++p)
    first_rank.push_back(1 + int(int64_t(comm_ranks - 1) * p / (processes - 1)));
  return first_rank;
}

// The memory one context's processes share, unmapped when this goes.
class RanksMapping {
 public:
  RanksMapping(void* mem, size_t bytes) : mem_(mem), bytes_(bytes) {}
  RanksMapping(const RanksMapping&) = delete;
  RanksMapping& operator=(const RanksMapping&) = delete;
  ~RanksMapping() { munmap(mem_, bytes_); }

 private:
  void* mem_;
  size_t bytes_;
};

// Maps what job's processes share (RanksShared, then every decision, -2: never decided), with a
// barrier for `processes` of them, and points job.shared and job.decisions into it.
RanksMapping map_ranks_shared(RanksJob& job, int processes) {
  const size_t horizon = size_t(job.opt->horizon);
  const size_t bytes = sizeof(RanksShared) + size_t(job.comm_ranks) * horizon;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error(std::string("plugin-check: mmap: ") + std::strerror(errno));
  job.shared = new (mem) RanksShared{};
  job.decisions = static_cast<int8_t*>(mem) + sizeof(RanksShared);
  std::memset(job.decisions, -2, size_t(job.comm_ranks) * horizon);  // -2: never decided
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&job.shared->barrier, &attr, unsigned(processes));
  pthread_barrierattr_destroy(&attr);
  return RanksMapping(mem, bytes);
}

// A context's rank processes, in order, and which of them have ended (been reaped).
struct RankProcesses {
  std::vector<pid_t> pids;
  std::vector<bool> done;
};

// Forks job's `processes` rank processes into `procs`; the error when one cannot be started.
std::string start_rank_processes(const RanksJob& job, int processes, RankProcesses& procs) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = fork();
    if (pid == 0) rank_process(job, p);
    if (pid < 0)
      return std::string("cannot start ") + process_label(job, p) + ": fork: " + std::strerror(errno);
    procs.pids.push_back(pid);
    procs.done.push_back(false);
  }
  return std::string();
}

// The error when the processes still running were not done within --rank-timeout: the call each
// was at, the furthest behind marked.
std::string rank_timeout_failure(const RanksJob& job, const RankProcesses& procs, double rank_timeout) {
  std::string failure = "did not finish within --rank-timeout " + std::to_string(int(rank_timeout)) + " s:";
  int64_t behind = INT64_MAX, ahead = -1;
  for (size_t p = 0; p < procs.pids.size(); ++p)
    if (!procs.done[p]) {
      behind = std::min(behind, job.shared->procs[p].call.load());
      ahead = std::max(ahead, job.shared->procs[p].call.load());
    }
  for (size_t p = 0; p < procs.pids.size(); ++p)
    if (!procs.done[p]) {
      const int64_t call = job.shared->procs[p].call.load();
      failure += " " + process_label(job, int(p)) +
                 (call < 0 ? " was still initialising" : " was at call " + std::to_string(call)) +
                 (call == behind && behind < ahead ? " (furthest behind);" : ";");
    }
  failure.pop_back();
  return failure;
}

// Every process must end on its own, with status 0, within --rank-timeout: the error naming the
// first that crashed or gave up, or those still running at the deadline; empty when all did.
std::string wait_rank_processes(const RanksJob& job, RankProcesses& procs, double rank_timeout) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(rank_timeout);
  std::string failure;
  size_t left = procs.pids.size();
  while (failure.empty() && left > 0) {
    bool reaped = false;
    for (size_t p = 0; p < procs.pids.size() && failure.empty(); ++p) {
      if (procs.done[p]) continue;
      int status = 0;
      if (waitpid(procs.pids[p], &status, WNOHANG) != procs.pids[p]) continue;
      procs.done[p] = true;
      --left;
      reaped = true;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failure = process_failure(job, int(p), status);
    }
    if (!failure.empty() || left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      failure = rank_timeout_failure(job, procs, rank_timeout);
      break;
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return failure;
}

// Ends the processes still running (the others wait at the barrier for one that failed) and
// reaps them.
void kill_rank_processes(const RankProcesses& procs) {
  for (size_t p = 0; p < procs.pids.size(); ++p)
    if (!procs.done[p]) kill(procs.pids[p], SIGKILL);
  for (size_t p = 0; p < procs.pids.size(); ++p)
    if (!procs.done[p]) waitpid(procs.pids[p], nullptr, 0);
}

// Every rank's every decision against the replay's; the first difference of each rank is
// reported (later calls follow from other observations).
void compare_rank_decisions(const RanksJob& job, const ReplayReference& ref, ContextOutcome& out) {
  const PluginCheckOptions& opt = *job.opt;
  const int comm_ranks = job.comm_ranks;
  const size_t horizon = size_t(opt.horizon);
  out.checked = true;
  out.steps = comm_ranks * opt.horizon;
  out.via_report = opt.horizon;  // the leader's rank: the latencies the plugin learns from
  out.not_joined = job.shared->procs[0].not_joined.load();
  for (int r = 0; r < comm_ranks; ++r) {
    const int8_t* d = job.decisions + size_t(r) * horizon;
    for (int t = 0; t < opt.horizon; ++t)
      if (d[t] != ref.slots[size_t(t)]) {
        out.mismatches.push_back({job.c, t, d[t], ref.slots[size_t(t)], r});
        break;
      }
  }
  for (int t = 0; t < opt.horizon; ++t)
    for (int r = 1; r < comm_ranks; ++r)
      if (job.decisions[size_t(r) * horizon + size_t(t)] != job.decisions[size_t(t)]) {
        ++out.rank_disagreements;
        break;
      }
}

// Leader mode: context c checked in its own rank processes (the file comment).
ContextOutcome check_context_ranks(const Sweep& sweep, int c, const PolicySpec& spec,
                                   const PluginCheckOptions& opt, const std::string& secret) {
  ContextOutcome out;
  const SweepView v = sweep.view();
  const Context& ctx = sweep.context(c);
  CostTable7x3 table;
  if (!context_cost_table(v, c, &table, &out.skipped)) return out;
  const int comm_ranks = ctx.nodes * ctx.gpus_per_node;
  if (comm_ranks < 2) {
    out.skipped = "a one-rank communicator never asks a leader (plugin-check without --ranks checks it)";
    return out;
  }
  const ReplayReference ref =
      replay_reference(v, ctx, c, spec, opt, kLeaderPrefetch, kLeaderWindow, kLeaderStart);

  RanksJob job;
  job.opt = &opt;
  job.v = &v;
  job.ctx = &ctx;
  job.c = c;
  job.table = &table;
  job.ref = &ref;
  job.comm_ranks = comm_ranks;
  job.comm_id = 0x6e63636c62000000ull + uint64_t(c);
  job.policy = spec.text;
  job.address = "127.0.0.1:" + std::to_string(ncclbot::plugin::free_loopback_port());
  job.secret = secret;
  const int processes = std::min(opt.ranks, comm_ranks);
  job.first_rank = first_ranks_of_processes(comm_ranks, processes);
  const RanksMapping mapping = map_ranks_shared(job, processes);

  RankProcesses procs;
  std::string failure = start_rank_processes(job, processes, procs);
  if (failure.empty()) failure = wait_rank_processes(job, procs, opt.rank_timeout);
  if (!failure.empty()) {
    kill_rank_processes(procs);
    out.failure = "context " + std::to_string(c) + " (" + std::string(collective_name(ctx.collective)) + " " +
                  std::to_string(ctx.nodes) + "x" + std::to_string(ctx.gpus_per_node) + " " +
                  std::to_string(ctx.bytes) + " B): " + failure;
    return out;
  }
  pthread_barrier_destroy(&job.shared->barrier);
  compare_rank_decisions(job, ref, out);
  return out;
}

// Loads the plugin in a child process (the parent must not: its rank processes are forked from it
// and load the plugin fresh, as each of a job's processes does); a usage error when it cannot.
void preflight_plugin(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("plugin-check: pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string why;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      why = std::string("cannot load '") + path + "': " + dlerror();
    } else {
      const auto* tuner = static_cast<const NcclTunerV5*>(dlsym(h, "ncclTunerPlugin_v5"));
      if (!tuner || !tuner->init || !tuner->getCollInfo || !tuner->finalize)
        why = "'" + path + "' exports no usable ncclTunerPlugin_v5";
      else if (!dlsym(h, "ncclbotReportLatency"))
        why = "'" + path + "' exports no ncclbotReportLatency (--ranks reports latencies through it)";
    }
    if (!why.empty() && ::write(fds[1], why.data(), why.size()) < 0) _exit(4);
    _exit(why.empty() ? 0 : 3);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    throw std::runtime_error(std::string("plugin-check: fork: ") + std::strerror(errno));
  }
  std::string why;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    why.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!why.empty()) throw UsageError("--plugin: " + why);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw UsageError("--plugin: loading '" + path + "' failed (status " + std::to_string(status) + ")");
}

// Declares plugin-check's options on `app`, in --help order, bound to `opt`.
void add_plugin_check_options(CLI::App& app, PluginCheckOptions& opt) {
  app.add_option("--plugin", opt.plugin_path, "path of libnccl-tuner-ncclbot.so")->required();
  app.add_option("--sweep", opt.sweep_path, "sweep CSV with prior_us (the cost table NCCL would pass)")
      ->required();
  app.add_option("--policy", opt.policy, "one policy spec, e.g. ucb1:c=0.5,n0=8")->required();
  app.add_option("--seed", opt.seed, "replay seed = NCCLBOT_SEED (default 0)");
  app.add_option("--horizon", opt.horizon, "calls per context (default 200)");
  app.add_option("--delay", opt.delay,
                 "feedback delay D: each call's latency is reported after the next D calls were decided "
                 "(default 0)");
  app.add_option("--nodes", opt.nodes, "only these node counts");
  app.add_option("--collectives", opt.collectives, "only these collectives");
  app.add_option("--feed", opt.feed,
                 "how latencies go back: profiler, report, or auto (profiler when ns timestamps carry the "
                 "value exactly, else report; default)")
      ->check(CLI::IsMember({"auto", "profiler", "report"}));
  app.add_option("--log", opt.log_path,
                 "have the plugin write its decision log here (NCCLBOT_LOG; a new file, docs/ope.md)");
  app.add_option(
      "--ranks", opt.ranks,
      "check leader mode in this many processes (2..64) on loopback, every rank's decisions against "
      "the replay of the leader's protocol (--as-deployed leader); default 1: local mode in this "
      "process");
  app.add_option("--rank-timeout", opt.rank_timeout,
                 "with --ranks: seconds one context's processes may take before the check fails, naming them "
                 "(default 300)");
  app.add_option("--plugin-env", opt.plugin_env,
                 "NAME=VALUE set for the plugin after plugin-check's own settings (repeatable; e.g. to see "
                 "that a plugin set up otherwise is caught)");
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// Checks the options against each other and parses the policy, which must be one that runs
// inside NCCL.
PolicySpec check_plugin_check_options(const PluginCheckOptions& opt) {
  if (opt.horizon < 1) throw UsageError("--horizon must be at least 1");
  if (opt.delay < 0 || opt.delay > kMaxReplayDelay)
    throw UsageError("--delay must be in [0, " + std::to_string(kMaxReplayDelay) + "]");
  if (opt.ranks < 1 || opt.ranks > kMaxCheckRanks)
    throw UsageError("--ranks must be in [1, " + std::to_string(kMaxCheckRanks) + "]");
  const bool leader_mode = opt.ranks > 1;
  if (leader_mode && opt.delay != 0)
    throw UsageError(
        "--delay applies to local mode; with --ranks the delay is the leader protocol's (the replay's "
        "--as-deployed leader)");
  if (leader_mode && opt.feed == "profiler")
    throw UsageError("--ranks reports latencies through ncclbotReportLatency (--feed report or auto)");
  if (leader_mode && !opt.log_path.empty())
    throw UsageError("--log applies to local mode (with --ranks every context is a job of its own)");
  if (!(opt.rank_timeout > 0.0)) throw UsageError("--rank-timeout must be positive");
  for (const std::string& a : opt.plugin_env)
    if (a.find('=') == std::string::npos || a.find('=') == 0)
      throw UsageError("--plugin-env " + a + ": expected NAME=VALUE");
  const PolicySpec spec = parse_policy_spec(opt.policy);
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + opt.policy + ": " + std::string(policy_name(spec.config.kind)) +
                     " cannot run inside NCCL (it needs the sweep's ground truth or a fitted model); its "
                     "decisions ship as a table (NCCLBOT_MODE=table)");
  return spec;
}

// The sums over the contexts checked, and every first difference.
struct CheckTotals {
  int checked = 0, skipped = 0, steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
  int rank_disagreements = 0;
  std::string failure;  // a rank process that crashed, gave up or hung: the check stops there
  std::vector<Mismatch> mismatches;
  std::set<int> differing;  // contexts with a mismatch
};

// Adds the outcome of context c, the i-th of `contexts`, to the totals; says on stderr why it was
// skipped, and (without --json) every 20 contexts how far the check is.
void tally_context(CheckTotals& totals, size_t i, int c, const ContextOutcome& o,
                   const PluginCheckOptions& opt, size_t contexts) {
  if (!o.checked) {
    ++totals.skipped;
    std::cerr << "plugin-check: context " << c << " skipped: " << o.skipped << "\n";
    return;
  }
  ++totals.checked;
  totals.steps += o.steps;
  totals.via_profiler += o.via_profiler;
  totals.via_report += o.via_report;
  totals.not_joined += o.not_joined;
  totals.rank_disagreements += o.rank_disagreements;
  if (!o.mismatches.empty()) totals.differing.insert(c);
  totals.mismatches.insert(totals.mismatches.end(), o.mismatches.begin(), o.mismatches.end());
  if (!opt.json && contexts >= 20 && (i + 1) % 20 == 0)
    std::cerr << "plugin-check: " << (i + 1) << "/" << contexts << " contexts\n";
}

// --ranks: every context in rank processes of its own, until one of them fails.
void check_contexts_leader_mode(CheckTotals& totals, const Sweep& sweep, const std::vector<int>& contexts,
                                const PolicySpec& spec, const PluginCheckOptions& opt) {
  // The rank processes set the plugin's environment themselves; this process never loads it.
  preflight_plugin(opt.plugin_path);
  const std::string secret = random_hex_key();  // the leader's and followers', one per run
  for (size_t i = 0; i < contexts.size() && totals.failure.empty(); ++i) {
    const ContextOutcome o = check_context_ranks(sweep, contexts[i], spec, opt, secret);
    totals.failure = o.failure;
    if (totals.failure.empty()) tally_context(totals, i, contexts[i], o, opt, contexts.size());
  }
  if (!totals.failure.empty()) std::cerr << "plugin-check: ERROR " << totals.failure << "\n";
}

// --log: a new file in an existing folder, named without %r; the plugin is told to write it.
void use_decision_log(const PluginCheckOptions& opt) {
  // A log of one run: appending to an older one would mix two policies under one header.
  check_output_not_input(opt.log_path, {opt.sweep_path, opt.plugin_path}, "--log");
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(opt.log_path, ec)))  // a dangling symlink exists too
    throw UsageError("--log " + opt.log_path + " exists; plugin-check writes a new log (remove it first)");
  const fs::path folder = fs::path(opt.log_path).parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec))
    throw UsageError("--log " + opt.log_path + ": there is no folder '" + folder.string() +
                     "' to write it in");
  if (opt.log_path.find('%') != std::string::npos)
    throw UsageError("--log names one file (no %r: plugin-check drives a single rank)");
  setenv("NCCLBOT_LOG", opt.log_path.c_str(), 1);
}

// Local mode: the plugin loaded in this process, every context's communicator driven here.
void check_contexts_local_mode(CheckTotals& totals, const Sweep& sweep, const std::vector<int>& contexts,
                               const PolicySpec& spec, const PluginCheckOptions& opt) {
  // The plugin reads its settings at each communicator's init. One process drives every rank's
  // decisions here, so the rank-local learner is the one to compare (docs/plugin.md).
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", spec.text.c_str(), 1);
  setenv("NCCLBOT_SEED", std::to_string(opt.seed).c_str(), 1);
  setenv("NCCLBOT_AGREEMENT", "local", 1);
  for (const char* name : {"NCCLBOT_STATE", "NCCLBOT_TABLE", "NCCLBOT_LEADER", "NCCLBOT_LOG",
                           "NCCLBOT_LOG_RANKS", "NCCLBOT_RANK"})
    unsetenv(name);
  if (!opt.log_path.empty()) use_decision_log(opt);
  apply_plugin_env(opt.plugin_env);
  const LoadedPlugin plugin = load_plugin(opt.plugin_path);
  for (size_t i = 0; i < contexts.size(); ++i)
    tally_context(totals, i, contexts[i], check_context(plugin, sweep, contexts[i], spec, opt, opt.feed), opt,
                  contexts.size());
  std::error_code ec;
  if (!opt.log_path.empty() &&
      !std::filesystem::is_regular_file(std::filesystem::symlink_status(opt.log_path, ec)))
    throw UsageError("--log " + opt.log_path +
                     ": the plugin wrote no decision log (its warning above says why)");
}

// "3,5..7": the ranks of mismatches [k, end), runs of consecutive ranks joined.
std::string mismatch_ranks(const std::vector<Mismatch>& mismatches, size_t k, size_t end) {
  std::string ranks;
  for (size_t r = k; r < end; ++r) {
    size_t run = r;
    while (run + 1 < end && mismatches[run + 1].rank == mismatches[run].rank + 1) ++run;
    ranks += (ranks.empty() ? "" : ",") + std::to_string(mismatches[r].rank) +
             (run > r ? ".." + std::to_string(mismatches[run].rank) : std::string());
    r = run;
  }
  return ranks;
}

// One line per context and first difference, at most `max_reports`; with --ranks the ranks that
// share it (all of them, when they agree with each other as they must) on that line.
void print_mismatches(const std::vector<Mismatch>& mismatches, const Sweep& sweep, int max_reports) {
  size_t printed = 0, groups = 0;
  for (size_t k = 0; k < mismatches.size();) {
    const Mismatch& m = mismatches[k];
    size_t end = k + 1;
    while (end < mismatches.size() && mismatches[end].context == m.context &&
           mismatches[end].step == m.step && mismatches[end].plugin_slot == m.plugin_slot &&
           mismatches[end].replay_slot == m.replay_slot)
      ++end;
    ++groups;
    if (int(printed) < max_reports) {
      const std::string ranks = mismatch_ranks(mismatches, k, end);
      const Context& ctx = sweep.context(m.context);
      std::cerr << "MISMATCH context " << m.context << " (" << ctx.fabric << " "
                << collective_name(ctx.collective) << " " << ctx.nodes << "x" << ctx.gpus_per_node << " "
                << ctx.bytes << " B) "
                << (m.rank >= 0 ? (end - k > 1 ? "ranks " : "rank ") + ranks + " " : std::string()) << "step "
                << m.step << ": plugin " << slot_label(m.plugin_slot) << ", replay "
                << slot_label(m.replay_slot) << "\n";
      ++printed;
    }
    k = end;
  }
  if (groups > printed)
    std::cerr << "plugin-check: " << (groups - printed) << " more mismatches not printed\n";
}

// The verdict line on stderr, and the decision log's name.
void print_check_summary(const CheckTotals& totals, const PolicySpec& spec, const PluginCheckOptions& opt,
                         bool equal) {
  const bool leader_mode = opt.ranks > 1;
  std::cerr << "plugin-check " << spec.text << " seed " << opt.seed
            << (opt.delay ? " delay " + std::to_string(opt.delay) : std::string())
            << (leader_mode ? " leader mode, " + std::to_string(opt.ranks) + " processes" : std::string())
            << ": " << totals.checked << " contexts x " << opt.horizon << " calls, " << totals.steps
            << " decisions compared" << (leader_mode ? " (every rank's)" : "") << ", "
            << totals.differing.size() << " contexts differ";
  if (leader_mode) std::cerr << ", ranks disagree on " << totals.rank_disagreements << " calls";
  std::cerr << "; latencies fed via profiler " << totals.via_profiler << ", via report " << totals.via_report
            << (totals.not_joined ? ", NOT JOINED " + std::to_string(totals.not_joined) : std::string())
            << "; "
            << (equal                    ? "EQUAL"
                : totals.failure.empty() ? "DIFFERENT"
                                         : "FAILED (a rank process, above)")
            << "\n";
  if (!opt.log_path.empty()) std::cerr << "plugin-check: decision log " << opt.log_path << "\n";
}

// --json: the verdict and every first difference as one JSON document on stdout.
void print_check_json(const CheckTotals& totals, const PolicySpec& spec, const PluginCheckOptions& opt,
                      bool equal) {
  nlohmann::json j;
  j["policy"] = spec.text;
  j["seed"] = opt.seed;
  j["horizon"] = opt.horizon;
  j["delay"] = opt.delay;
  j["ranks"] = opt.ranks;
  j["contexts"] = totals.checked;
  j["skipped"] = totals.skipped;
  j["decisions"] = totals.steps;
  j["via_profiler"] = totals.via_profiler;
  j["via_report"] = totals.via_report;
  j["not_joined"] = totals.not_joined;
  if (opt.ranks > 1) j["rank_disagreements"] = totals.rank_disagreements;
  j["equal"] = equal;
  if (!totals.failure.empty()) j["error"] = totals.failure;
  if (!opt.log_path.empty()) j["log"] = opt.log_path;
  nlohmann::json list = nlohmann::json::array();
  for (const Mismatch& m : totals.mismatches) {
    nlohmann::json e = {{"context", m.context},
                        {"step", m.step},
                        {"plugin", slot_label(m.plugin_slot)},
                        {"replay", slot_label(m.replay_slot)}};
    if (m.rank >= 0) e["rank"] = m.rank;
    list.push_back(e);
  }
  j["mismatches"] = list;
  std::cout << j.dump() << "\n";
}

// The command's work once the options are parsed: 0 when every decision is equal, else 1.
int run_plugin_check(const PluginCheckOptions& opt) {
  const PolicySpec spec = check_plugin_check_options(opt);
  ContextFilter filter;
  if (!opt.nodes.empty()) filter.nodes = parse_node_list(opt.nodes, "--nodes");
  if (!opt.collectives.empty()) filter.collectives = parse_collective_list(opt.collectives, "--collectives");
  const Sweep sweep = read_sweep_csv(opt.sweep_path);
  if (!sweep.has_prior())
    throw InputError(opt.sweep_path, 0,
                     "needs a prior_us column: it is the cost table NCCL passes the plugin");
  const std::vector<int> contexts = filter.select_some(sweep, opt.sweep_path);

  CheckTotals totals;
  if (opt.ranks > 1)
    check_contexts_leader_mode(totals, sweep, contexts, spec, opt);
  else
    check_contexts_local_mode(totals, sweep, contexts, spec, opt);
  print_mismatches(totals.mismatches, sweep, opt.max_reports);
  const bool equal =
      totals.mismatches.empty() && totals.checked > 0 && totals.not_joined == 0 && totals.failure.empty();
  print_check_summary(totals, spec, opt, equal);
  if (opt.json) print_check_json(totals, spec, opt, equal);
  return equal ? 0 : 1;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<PluginCheckOptions>();
  add_plugin_check_options(app, *opt);
  return [opt] { return run_plugin_check(*opt); };
}

const bool registered = register_command(
    {"plugin-check", "load the built tuner plugin as NCCL does and check its decisions equal the replay's",
     setup});

}  // namespace plugin_check_command
}  // namespace ncclbot::cli
