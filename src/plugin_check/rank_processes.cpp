#include "plugin_check/rank_processes.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin_check/context_check.hpp"

namespace ncclbot::plugin_check {
namespace {

// What one context's processes share (one MAP_SHARED mapping), followed by every rank's decisions,
// rank-major: decisions[rank * T + t], the arm the rank's call t ran (NCCL's rule on the table the
// plugin returned; in a knob sweep the index of the arm among the context's, its channels and chunk
// as the plugin set them, -2 when it is none of them).
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
  const CheckSettings* settings = nullptr;
  const SweepView* v = nullptr;
  const Context* ctx = nullptr;
  int c = 0;
  const CostTable7x3* table = nullptr;
  const ReplayReference* ref = nullptr;
  int comm_ranks = 0;           // nodes x GPUs per node
  std::vector<int> first_rank;  // process p holds communicator ranks [first_rank[p], first_rank[p + 1])
  uint64_t comm_id = 0;
  std::string policy, address, secret;
  std::string knobs;  // a knob sweep's NCCLBOT_KNOBS for the context (empty: a slot sweep)
  RanksShared* shared = nullptr;
  int16_t* decisions = nullptr;
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

// One rank process: loads the plugin as NCCL does, initialises its communicator ranks, plays the
// context's calls in lockstep with the other processes, and writes each rank's decisions. Never
// returns; exit status 3 with `error` set when it gives up.
[[noreturn]] void rank_process(const RanksJob& job, int p) {
  RankProcessState& me = job.shared->procs[p];
  auto fail = [&](const std::string& why) {
    std::snprintf(me.error, sizeof me.error, "%s", why.c_str());
    _exit(3);
  };
  const CheckSettings& settings = *job.settings;
  for (const char* name : {"NCCLBOT_STATE", "NCCLBOT_TABLE", "NCCLBOT_LOG", "NCCLBOT_LOG_RANKS",
                           "NCCLBOT_AGREEMENT", "NCCLBOT_LEADER_SECRET_FILE"})
    unsetenv(name);
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", job.policy.c_str(), 1);
  setenv("NCCLBOT_SEED", std::to_string(settings.seed).c_str(), 1);
  setenv("NCCLBOT_RANK", std::to_string(p).c_str(), 1);
  setenv("NCCLBOT_LEADER", job.address.c_str(), 1);
  setenv("NCCLBOT_LEADER_SECRET", job.secret.c_str(), 1);
  setenv("NCCLBOT_LEADER_TIMEOUT_MS", "20000", 1);
  if (job.knobs.empty())
    unsetenv("NCCLBOT_KNOBS");
  else
    setenv("NCCLBOT_KNOBS", job.knobs.c_str(), 1);
  apply_plugin_env(settings.plugin_env);
  g_rank_log_prefix = "plugin-check: context " + std::to_string(job.c) + ", " + process_label(job, p) + ": ";

  void* handle = dlopen(settings.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail(std::string("cannot load the plugin: ") + dlerror());
  const auto* tuner = static_cast<const NcclTunerV5*>(dlsym(handle, "ncclTunerPlugin_v5"));
  const auto report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(handle, "ncclbotReportLatency"));
  if (!tuner || !tuner->init || !tuner->getCollInfo || !tuner->finalize || !report)
    fail("the plugin exports no usable ncclTunerPlugin_v5 and ncclbotReportLatency");
  // A knob sweep binds tuner v6, whose getChunkSize sets the chunk (as the local check does).
  const auto* chunk_hook =
      job.knobs.empty() ? nullptr : static_cast<const NcclTunerV6*>(dlsym(handle, "ncclTunerPlugin_v6"));
  if (!job.knobs.empty() && (!chunk_hook || !chunk_hook->init || !chunk_hook->getChunkSize))
    fail("the plugin exports no usable ncclTunerPlugin_v6, whose getChunkSize a knob sweep needs");
  const Context& ctx = *job.ctx;
  const SweepView& v = *job.v;
  const ReplayReference& ref = *job.ref;
  const int first = job.first_rank[size_t(p)], count = job.first_rank[size_t(p) + 1] - first;
  std::vector<void*> comms(size_t(count), nullptr);
  for (int k = 0; k < count; ++k) {
    const auto init = chunk_hook ? chunk_hook->init : tuner->init;
    if (init(&comms[size_t(k)], job.comm_id, size_t(job.comm_ranks), size_t(ctx.nodes), rank_logger, nullptr,
             nullptr) != 0)
      fail("the tuner's init of communicator rank " + std::to_string(first + k) + " failed");
  }
  pthread_barrier_wait(&job.shared->barrier);  // communicator init is collective
  const int horizon = settings.horizon;
  for (int t = 0; t < horizon; ++t) {
    me.call.store(t, std::memory_order_relaxed);
    for (int k = 0; k < count; ++k) {
      const PluginPick played = tuner_pick(*tuner, chunk_hook, comms[size_t(k)], ctx, job.table->t);
      const int pick = played_index(v, job.c, played);
      job.decisions[size_t(first + k) * size_t(horizon) + size_t(t)] = int16_t(pick);
      if (pick < 0) continue;  // no arm left usable, or none of the context's: nothing to draw
      // The latency the call observed, drawn as the local check draws it; every rank reports its
      // own (the plugin learns from the leader's alone), before the next call: none in flight.
      const float x =
          v.dynamic() ? ref.latency[size_t(t)] : replay_draw(v, job.c, pick, settings.seed, ref.stream_id, t);
      if (pick == ref.slots[size_t(t)] && std::memcmp(&x, &ref.latency[size_t(t)], sizeof x) != 0)
        fail("plugin-check's draw differs from the replay's at step " + std::to_string(t));
      const int rc = report(job.comm_id, job.comm_ranks, ctx.nodes, int(ctx.collective), size_t(ctx.bytes),
                            int(played.arm.algo), int(played.arm.proto), double(x));
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
               : "at call " + std::to_string(call) + " of " + std::to_string(job.settings->horizon);
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

// Maps what job's processes share (RanksShared, then every decision, -3: never decided), with a
// barrier for `processes` of them, and points job.shared and job.decisions into it.
RanksMapping map_ranks_shared(RanksJob& job, int processes) {
  const size_t horizon = size_t(job.settings->horizon);
  const size_t bytes = sizeof(RanksShared) + size_t(job.comm_ranks) * horizon * sizeof(int16_t);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error(std::string("plugin-check: mmap: ") + std::strerror(errno));
  job.shared = new (mem) RanksShared{};
  job.decisions = reinterpret_cast<int16_t*>(static_cast<char*>(mem) + sizeof(RanksShared));
  std::fill_n(job.decisions, size_t(job.comm_ranks) * horizon, int16_t(-3));  // -3: never decided
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
  command_out().flush();
  command_err().flush();
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
      failure += ' ';
      failure += process_label(job, int(p)) +
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
  const CheckSettings& settings = *job.settings;
  const int comm_ranks = job.comm_ranks;
  const size_t horizon = size_t(settings.horizon);
  out.checked = true;
  out.steps = comm_ranks * settings.horizon;
  out.via_report = settings.horizon;  // the leader's rank: the latencies the plugin learns from
  out.not_joined = job.shared->procs[0].not_joined.load();
  for (int r = 0; r < comm_ranks; ++r) {
    const int16_t* d = job.decisions + size_t(r) * horizon;
    for (int t = 0; t < settings.horizon; ++t)
      if (d[t] != ref.slots[size_t(t)]) {
        out.mismatches.push_back({job.c, t, d[t], ref.slots[size_t(t)], r});
        break;
      }
  }
  for (int t = 0; t < settings.horizon; ++t)
    for (int r = 1; r < comm_ranks; ++r)
      if (job.decisions[size_t(r) * horizon + size_t(t)] != job.decisions[size_t(t)]) {
        ++out.rank_disagreements;
        break;
      }
}

}  // namespace

ContextOutcome check_context_ranks(const Sweep& sweep, int c, const PolicySpec& spec,
                                   const CheckSettings& settings, const std::string& secret) {
  ContextOutcome out;
  const SweepView v = sweep.arm_view();
  const Context& ctx = sweep.context(c);
  CostTable7x3 table;
  std::string knobs;
  if (!context_table(v, c, &table, &knobs, &out.skipped)) return out;
  const int comm_ranks = ctx.nodes * ctx.gpus_per_node;
  if (comm_ranks < 2) {
    out.skipped = "a one-rank communicator never asks a leader (plugin-check without --ranks checks it)";
    return out;
  }
  const ReplayReference ref =
      replay_reference(v, ctx, c, spec, settings, kLeaderPrefetch, kLeaderWindow, kLeaderStart);

  RanksJob job;
  job.settings = &settings;
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
  job.knobs = knobs;
  const int processes = std::min(settings.ranks, comm_ranks);
  job.first_rank = first_ranks_of_processes(comm_ranks, processes);
  const RanksMapping mapping = map_ranks_shared(job, processes);

  RankProcesses procs;
  std::string failure = start_rank_processes(job, processes, procs);
  if (failure.empty()) failure = wait_rank_processes(job, procs, settings.rank_timeout);
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
void preflight_plugin(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("plugin-check: pipe: ") + std::strerror(errno));
  command_out().flush();
  command_err().flush();
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

}  // namespace ncclbot::plugin_check
