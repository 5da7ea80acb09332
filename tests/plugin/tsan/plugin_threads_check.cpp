// ThreadSanitizer driver for the tuner plugin (built with -fsanitize=thread by src/plugin/CMakeLists.txt,
// registered as ctest `plugin_tsan_threads`). Many communicators from several threads at once, each
// with its own profiler context fed from a second ("proxy") thread, in every mode, with tables of
// odd shapes, unknown collectives, 0 bytes, NULL logger and NULL nChannels, finalized in both
// orders. It also checks the invariants every call must keep: success returned, no -1 entry
// written. A data race makes TSan exit with 66; a broken invariant exits 1.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "plugin/follower_link.hpp"
#include "plugin/kernel_channel_event.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"

using ncclbot::plugin::free_loopback_port;

extern "C" {
extern const NcclTunerV5 ncclTunerPlugin_v5;
extern const NcclTunerV4 ncclTunerPlugin_v4;
extern const NcclProfilerV5 ncclProfiler_v5;
}

namespace {

std::atomic<int> failures{0};

void fail(const char* what, int a, int b) {
  if (failures.fetch_add(1) < 10) std::fprintf(stderr, "FAIL: %s (%d, %d)\n", what, a, b);
}

void quiet_logger(int, unsigned long, const char*, int, const char*, ...) {}

// A port the kernel just handed out on 127.0.0.1 (released again for the leader to bind).
// NCCL's process-wide activation mask, for the phase that runs as NCCL 2.28+ does (`nccl_api`): each
// call loads it and starts a CollApi event, and its channels report only when it held KernelCh.
int nccl_event_mask = 0;

// One communicator's life: init (tuner and profiler in a thread-dependent order), calls, a proxy
// thread delivering channel events for every call, finalize in a thread-dependent order.
void run_comm(int thread, int round, bool nccl_api) {
  const uint64_t comm_id = 0x1000u + uint64_t(thread % 3) * 16 + uint64_t(round % 2);  // some hashes repeat
  const size_t nranks = 1;
  nccl_logger_t logger = (thread % 2) ? quiet_logger : nullptr;
  void* tctx = nullptr;
  void* pctx = nullptr;
  int local_mask = 0;
  int& mask = nccl_api ? nccl_event_mask : local_mask;
  const bool profiler_first = (thread + round) % 2 == 0;
  if (profiler_first) ncclProfiler_v5.init(&pctx, comm_id, &mask, "tsan", 1, int(nranks), 0, logger);
  if (round % 3 == 2) {
    if (ncclTunerPlugin_v4.init(nranks, 1, logger, &tctx) != kNcclSuccess) fail("v4 init", thread, round);
  } else if (ncclTunerPlugin_v5.init(&tctx, comm_id, nranks, 1, logger, nullptr, nullptr) != kNcclSuccess) {
    fail("v5 init", thread, round);
  }
  if (!profiler_first) ncclProfiler_v5.init(&pctx, comm_id, &mask, "tsan", 1, int(nranks), 0, logger);

  struct Pending {
    int coll;
    size_t bytes;
    int algo, proto;
    void* api = nullptr;
    bool watched = true;
  };
  std::vector<Pending> pending;
  const int shapes[3][2] = {{7, 3}, {8, 4}, {6, 2}};
  for (int call = 0; call < 300; ++call) {
    const int* shape = shapes[(call + thread) % 3];
    const int na = shape[0], np = shape[1];
    std::vector<float> table(size_t(na * np), -1.0f);
    for (int a = 0; a < na; ++a)
      for (int p = 0; p < np; ++p)
        if ((a + p + call) % 3 != 0) table[size_t(a * np + p)] = 10.0f + float(a * np + p);
    const std::vector<float> before = table;
    int coll = (call % 7 == 0) ? 11 + call % 5 : 4;  // unknown collective types now and then
    size_t bytes = (call % 11 == 0) ? 0 : size_t(1) << (call % 20);
    int channels = 0;
    int* nch = (call % 5 == 0) ? nullptr : &channels;
    void* api = nullptr;
    const int loaded = __atomic_load_n(&nccl_event_mask, __ATOMIC_RELAXED);
    if (nccl_api && (loaded & int(kNcclProfileCollApi))) {
      NcclProfilerEventDescrV5 d;
      std::memset(&d, 0, sizeof d);
      d.type = kNcclProfileCollApi;
      d.collApi.func = "AllReduce";
      d.collApi.count = bytes / 4;
      d.collApi.datatype = "ncclFloat32";
      ncclProfiler_v5.startEvent(pctx, &api, &d);
      if (api != nullptr) ncclProfiler_v5.stopEvent(api);
    }
    if (ncclTunerPlugin_v5.getCollInfo(tctx, coll, bytes, 1, reinterpret_cast<float**>(table.data()), na, np,
                                       0, nch) != kNcclSuccess)
      fail("getCollInfo result", thread, call);
    int picked = -1;
    for (size_t i = 0; i < table.size(); ++i) {
      if (before[i] < 0.0f && table[i] != before[i]) fail("wrote an ignored entry", thread, int(i));
      if (table[i] != before[i] && picked >= 0) fail("changed two entries", thread, int(i));
      if (table[i] != before[i]) picked = int(i);
    }
    if (picked >= 0)
      pending.push_back(
          {coll, bytes, picked / np, picked % np, api, !nccl_api || (loaded & int(kNcclProfileKernelCh))});
    if (call % 3 == 0)
      ncclbotReportLatency(comm_id, int(nranks), 1, coll, bytes, picked >= 0 ? picked / np : 1,
                           picked >= 0 ? picked % np : 2, 10.0 + call);
  }

  // The proxy thread: Coll start on this thread, channel events and Coll stop on the other.
  std::vector<void*> handles;
  std::vector<bool> watched;
  static const char* kAlgo[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  static const char* kProto[] = {"LL", "LL128", "Simple"};
  for (const Pending& p : pending) {
    NcclProfilerEventDescrV5 d;
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileColl;
    d.coll.func = "AllReduce";
    d.coll.count = p.bytes / 4;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = 2;
    d.coll.algo = p.algo < 7 ? kAlgo[p.algo] : "?";
    d.coll.proto = p.proto < 3 ? kProto[p.proto] : "?";
    d.parentObj = p.api;
    void* h = nullptr;
    ncclProfiler_v5.startEvent(pctx, &h, &d);
    handles.push_back(h);
    watched.push_back(p.watched);
  }
  std::thread proxy([&] {
    uint64_t t = 1000;
    for (size_t k = 0; k < handles.size(); ++k) {
      void* coll = handles[k];
      if (!watched[k]) {  // NCCL instrumented no channel of it
        ncclProfiler_v5.stopEvent(coll);
        continue;
      }
      void* chans[2] = {nullptr, nullptr};
      for (int c = 0; c < 2; ++c) {
        auto d = ncclbot::plugin::kernel_channel_start<NcclProfilerEventDescrV5>(coll, c, t);
        ncclProfiler_v5.startEvent(pctx, &chans[c], &d);
      }
      ncclProfiler_v5.stopEvent(coll);  // "enqueued" may come before or after the channels
      for (int c = 0; c < 2; ++c) {
        NcclProfilerEventStateArgs args;
        args.kernelCh.pTimer = t + 5000 + uint64_t(c) * 100;
        ncclProfiler_v5.recordEventState(chans[c], kNcclProfilerKernelChStop, &args);
        ncclProfiler_v5.stopEvent(chans[c]);
      }
      t += 10000;
    }
  });
  // Decisions keep flowing while the proxy thread delivers latencies.
  for (int call = 0; call < 100; ++call) {
    float table[7][3];
    for (auto& row : table)
      for (float& v : row) v = 5.0f;
    int channels = 0;
    ncclTunerPlugin_v5.getCollInfo(tctx, 4, size_t(4096), 1, reinterpret_cast<float**>(table), 7, 3, 0,
                                   &channels);
    if (channels != 0) fail("nChannels changed in online mode", thread, call);
  }
  proxy.join();
  if (profiler_first) {
    ncclTunerPlugin_v5.finalize(tctx);
    ncclProfiler_v5.finalize(pctx);
  } else {
    ncclProfiler_v5.finalize(pctx);
    ncclTunerPlugin_v5.finalize(tctx);
  }
}

void run_threads(int threads, int rounds, bool nccl_api = false) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t, rounds, nccl_api] {
      for (int r = 0; r < rounds; ++r) run_comm(t, r, nccl_api);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

int main() {
  const char* table_path = "/tmp/ncclbot_tsan_table.csv";
  if (FILE* f = std::fopen(table_path, "w")) {
    std::fputs(
        "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
        "*,allreduce,*,*,0,65535,Tree,LL\n*,allreduce,*,*,65536,*,Ring,Simple\n",
        f);
    std::fclose(f);
  }
  char state_path[] = "/tmp/ncclbot_tsan_state_XXXXXX";
  const int fd = mkstemp(state_path);
  if (fd >= 0) close(fd);
  std::remove(state_path);

  // Environment is set between phases only: getenv in init must not race with setenv.
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", "ucb1:c=0.5,n0=2", 1);
  setenv("NCCLBOT_STATE", state_path, 1);
  run_threads(6, 6);
  setenv("NCCLBOT_POLICY", "egreedy:eps=0.3,n0=1", 1);
  unsetenv("NCCLBOT_STATE");
  run_threads(4, 4);
  // A watch rule: the profilers switch the one process-wide mask while every thread loads it.
  setenv("NCCLBOT_POLICY", "ucb1:c=0.5,n0=2@watch:full=2,floor=0.1", 1);
  run_threads(4, 4, true);
  setenv("NCCLBOT_MODE", "table", 1);
  setenv("NCCLBOT_TABLE", table_path, 1);
  run_threads(4, 4);
  setenv("NCCLBOT_MODE", "off", 1);
  run_threads(2, 2);

  // Leader role: a server with followers asking from several threads at once.
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", "thompson:n0=1,sigma=0.1", 1);
  setenv("NCCLBOT_LEADER", "127.0.0.1:0", 1);  // port 0 is rejected: exercises the failure path
  setenv("NCCLBOT_RANK", "0", 1);
  const char* secret = "tsan-check-secret-0123456789";
  setenv("NCCLBOT_LEADER_SECRET", secret, 1);
  ncclbot::plugin::LeaderKey key;
  std::string key_error;
  if (!ncclbot::plugin::leader_key_from_text(secret, &key, &key_error)) fail("secret", 0, 0);
  void* ctx = nullptr;
  ncclTunerPlugin_v5.init(&ctx, 77, 2, 1, nullptr, nullptr, nullptr);
  ncclTunerPlugin_v5.finalize(ctx);
  const int port = free_loopback_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  setenv("NCCLBOT_LEADER", address.c_str(), 1);
  // Two ranks of communicator 78 live in this (leader) process, two more behind follower links,
  // all four deciding concurrently; every one must see the same decision for every call index.
  constexpr int kLeaderCalls = 2000;
  void* local[2] = {nullptr, nullptr};
  for (void*& c : local) ncclTunerPlugin_v5.init(&c, 78, 4, 1, nullptr, nullptr, nullptr);
  std::vector<std::vector<int>> seen(4, std::vector<int>(kLeaderCalls, -3));
  // The context starts once the leader holds every rank's cost table of it: the local ranks' first
  // calls and each follower's first request. The local ranks make their first call, then wait until
  // both followers have been answered once, so the policy decides most calls, as after a collective
  // init (a follower answered before the last table arrived gets NCCL's choice for that window).
  std::atomic<int> followers_answered{0}, locals_started{0};
  // Both followers announce themselves before either asks for a decision: otherwise, on a loaded
  // machine, one follower can fetch every decision window before the other has even connected, and
  // all of them are (rightly) NCCL's own, since not every rank was present when they were decided.
  std::atomic<int> followers_hello{0};
  std::atomic<int> nccl_picks{0};  // follower decisions that were NCCL's own (diagnostics)
  std::vector<std::thread> ranks;
  for (int f = 0; f < 2; ++f)
    ranks.emplace_back([&, f] {
      std::string error;
      auto link = ncclbot::plugin::FollowerLink::connect(address, key, 5000, &error);
      if (!link) {
        fail("follower connect", f, 0);
        return;
      }
      ncclbot::plugin::WireHello hello;
      hello.comm_id = 78;
      hello.nranks = 4;
      hello.nnodes = 1;
      hello.rank = uint32_t(1 + f);
      // ACKed: counted by the leader.
      if (link->hello(hello, 5000) != ncclbot::plugin::FollowerLink::Joined::kAcked)
        fail("follower hello", f, 0);
      ++followers_hello;
      while ((followers_hello.load() < 2 || locals_started.load() < 2) && failures.load() == 0)
        std::this_thread::yield();
      float prior[21];
      for (float& p : prior) p = 3.0f;
      for (int i = 0; i < kLeaderCalls; ++i) {
        const int slot = link->decision(hello, 4 * 65 + 10, uint64_t(i), 512, prior, 5000, nullptr).slot;
        seen[size_t(2 + f)][size_t(i)] = slot < 0 ? 0 : slot;  // -1 = NCCL's pick: slot 0 on this table
        if (slot < 0) ++nccl_picks;
        if (i == 0) ++followers_answered;
      }
    });
  for (int l = 0; l < 2; ++l)
    ranks.emplace_back([&, l] {
      for (int i = 0; i < kLeaderCalls; ++i) {
        if (i == 1) {
          ++locals_started;
          while (followers_answered.load() < 2 && failures.load() == 0) std::this_thread::yield();
        }
        float table[7][3];
        for (auto& row : table)
          for (float& v : row) v = 3.0f;
        ncclTunerPlugin_v5.getCollInfo(local[l], 4, 512, 1, reinterpret_cast<float**>(table), 7, 3, 0,
                                       nullptr);
        int pick = -1;
        for (int s = 0; s < 21 && pick < 0; ++s)
          if (table[s / 3][s % 3] == 0.0f) pick = s;
        seen[size_t(l)][size_t(i)] = pick < 0 ? 0 : pick;
        if (i % 4 == 0)
          ncclbotReportLatency(78, 4, 1, 4, 512, pick < 0 ? 0 : pick / 3, pick < 0 ? 0 : pick % 3,
                               3.0 + i % 5);
      }
    });
  for (auto& th : ranks) th.join();
  int distinct = 0;
  bool used[21] = {};
  for (int i = 0; i < kLeaderCalls; ++i) {
    for (int r = 1; r < 4; ++r)
      if (seen[size_t(r)][size_t(i)] != seen[0][size_t(i)]) fail("ranks disagree", r, i);
    const int s = seen[0][size_t(i)];
    if (s >= 0 && s < 21 && !used[s]) used[s] = true, ++distinct;
  }
  // (distinct slots, follower decisions that were NCCL's own out of 2 x kLeaderCalls)
  if (distinct < 2) fail("the leader never left NCCL's pick", distinct, nccl_picks.load());
  for (void* c : local) ncclTunerPlugin_v5.finalize(c);
  std::remove(table_path);
  std::remove(state_path);
  if (failures.load() != 0) {
    std::fprintf(stderr, "%d invariant failures\n", failures.load());
    return 1;
  }
  std::fprintf(stderr, "plugin thread check passed\n");
  return 0;
}
