// The profiler half of the plugin (v7 for NCCL 2.31 and later, v6 for 2.29 and 2.30, v5 for 2.28, v4
// for 2.27): turns kernel-channel events into one measured latency per collective, latency = max over
// channels of (stop - start) of the GPU globaltimer (the same rule as NCCL's Inspector), and joins it to the
// online context that chose the arm: communicator hash, collective, bytes (x nRanks for AllGather /
// ReduceScatter, as the tuner saw them), algorithm and protocol from the collective's descriptor.
//
// Event lifetime: NCCL stops a Coll event when it is enqueued, before its kernel channels report,
// and passes the Coll handle as parentObj of each KernelCh event. So a Coll record lives until it
// is stopped and as many channel events as its descriptor announced (nChannels) have stopped; the
// profiler context frees any leftovers at finalize.
//
// CUDA graphs (v5, v6): the CollApi event of each collective says whether it was called while a
// graph was being captured, and NCCL passes its handle as the Coll event's parentObj. A captured
// collective is decided once, at capture (the learner settles that call then: its latency will
// never come as the call's); each replay of the graph runs its kernel channels again under the same
// Coll handle, so a captured Coll record stays until finalize and every round of its channels is one
// replay, logged as such and never fed to the policy (docs/plugin.md "CUDA graphs"). NCCL 2.27's v4
// has no such flag: there replays are not told apart.
//
// Watching fewer calls (v5 and later, a policy with a watch rule; docs/plugin.md "The cost of
// watching"): each CollApi event reads whether its call loaded KernelCh, and sets it for the call
// expected next (watch_switch.hpp). A call NCCL runs unwatched has no channels to wait for: its Coll
// record is done when it stops, and settles its call unlearned once every earlier call of the
// communicator has been answered (the learner takes answers in call order). A retired record that expected no
// channels is kept a while before it is freed, so a channel event of a call watched after all (two
// threads switching at once) finds no record rather than another call's at the same address.
//
// Copy-engine collectives (v6): NCCL runs them on the copy engines when the communicator's CTA
// policy asks for no CTAs, and decides so before it asks the tuner (NCCL src/enqueue.cc), so no
// decision waits for them; they have no kernel channels, and timing them would take CUDA events on
// the user's stream. So they are counted, never learned from, and the count is in the finalize line.
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include "plugin/context_key.hpp"
#include "plugin/live_handles.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"
#include "plugin/plugin_names.hpp"
#include "plugin/plugin_runtime.hpp"
#include "plugin/record_pool.hpp"

using namespace ncclbot::plugin;

namespace {

constexpr uint32_t kCollMagic = 0x434f4c4cu;         // "COLL"
constexpr uint32_t kChannelMagic = 0x4b434821u;      // "KCH!"
constexpr uint32_t kApiMagic = 0x43415049u;          // "CAPI"
constexpr size_t kMaxLiveCollectives = 1 << 16;      // collectives waiting for their channels
constexpr size_t kMaxCapturedCollectives = 1 << 14;  // captured ones, kept for their replays
constexpr size_t kMaxPendingApiCalls = 1 << 12;      // CollApi events whose Coll has not started yet
constexpr size_t kQuarantine = 256;                  // retired records kept from reuse (above)
// While calls are switched (a watch rule), uncaptured records still waiting for channels past which
// the stale ones are let go: those stopped, with no channel started, and more than kStaleAfter
// records old (their calls settle as lost). Far beyond the kernels a GPU queues (about a thousand
// launches before cudaLaunchKernel blocks), so a call enqueued ahead of its kernel is never let go.
constexpr size_t kStaleSweepAt = 8192, kStaleAfter = 4096;

struct ProfilerContext;

struct CollRecord {
  uint32_t magic = kCollMagic;
  ProfilerContext* owner = nullptr;
  int key = -1, slot = -1;
  uint64_t call = LatencySink::kNoCall;  // the learner's call it answers (LatencySink::bind_call)
  uint64_t seq = 0;                      // its order among the context's records
  RanKnobs ran;                          // the algorithm, protocol and channel count the descriptor says ran
  uint64_t bytes = 0;                    // as the tuner saw them
  int expected_channels = 0, started_channels = 0, stopped_channels = 0;
  bool coll_stopped = false;
  bool captured = false;         // into a CUDA graph: each round of its channels is a replay
  bool watched = true;           // its API call loaded KernelCh: its channels will report
  bool ready_unwatched = false;  // run unwatched and stopped: answered once the calls before it are
  uint64_t max_ns = 0;
  bool measured = false;  // a channel with a valid stop timer
  bool untimed = false;   // a channel without one: the maximum over channels is unknown
  bool in_live = false;   // in the context's live list (oldest first), whose neighbours these are
  CollRecord *prev = nullptr, *next = nullptr;
};

// A collective's API call (CollApi event), kept until its Coll event takes the graph flag.
struct ApiRecord {
  uint32_t magic = kApiMagic;
  bool graph_captured = false;
  bool watched = true;   // the mask the call loaded held KernelCh
  bool waiting = false;  // its Coll (or CeColl) event has not started yet
};

struct ChannelRecord {
  uint32_t magic = kChannelMagic;
  ProfilerContext* owner = nullptr;
  CollRecord* coll = nullptr;
  uint64_t start_ns = 0, stop_ns = 0;
  bool has_stop = false;
};

struct ProfilerContext {
  uint64_t comm_id = 0;
  int nranks = 1, nnodes = 1, rank = 0;
  PluginLog log;
  std::mutex mu;  // Coll records are shared by the thread that enqueues and the proxy thread
  // Every record comes from a pool of the context's (record_pool.hpp): no allocation per event.
  RecordPool<CollRecord> colls;
  RecordPool<ApiRecord> api_records;
  RecordPool<ChannelRecord> channels;
  CollRecord *live_head = nullptr, *live_tail = nullptr;  // collectives waiting for channels, by seq
  size_t live_count = 0;
  std::shared_ptr<LatencySink> learner;  // resolved lazily: the tuner's init runs after ours
  uint64_t delivered = 0;
  uint64_t copy_engine = 0;  // copy-engine collectives seen (v6): not learned
  uint64_t symmetric = 0;    // collectives NCCL ran with a symmetric kernel (v7): not learned
  size_t apis_waiting = 0;   // CollApi records whose Coll event has not started
  uint64_t captured = 0, replays = 0;
  size_t captured_live = 0;         // captured records in `live`
  int* mask = nullptr;              // NCCL's activation mask (v5 and later), attached to the watch switch
  uint64_t unwatched = 0;           // collectives NCCL ran unwatched (the watch rule): settled, not learned
  size_t unwatched_ready = 0;       // of those, records waiting for earlier calls to be answered
  uint64_t stale = 0;               // records let go that waited for channels never coming
  uint64_t unwatched_channels = 0;  // kernel channels of calls taken as unwatched (start_channel)
  uint64_t expected = 0, expected_right = 0;  // calls the switch expected, and expected rightly
  uint64_t next_seq = 0;
  std::array<CollRecord*, kQuarantine> quarantine{};  // retired records not given back yet, a ring
  size_t quarantine_next = 0;
};

// Whether `p` is one of the context's Coll records still waiting for channels (read only once the
// pool says it is one of its records).
bool is_live(const ProfilerContext* ctx, const void* p) {
  return p != nullptr && ctx->colls.owns(p) && static_cast<const CollRecord*>(p)->in_live;
}

void link_live(ProfilerContext* ctx, CollRecord* c) {
  c->prev = ctx->live_tail;
  c->next = nullptr;
  (ctx->live_tail ? ctx->live_tail->next : ctx->live_head) = c;
  ctx->live_tail = c;
  c->in_live = true;
  ++ctx->live_count;
}

void unlink_live(ProfilerContext* ctx, CollRecord* c) {
  if (!c->in_live) return;
  (c->prev ? c->prev->next : ctx->live_head) = c->next;
  (c->next ? c->next->prev : ctx->live_tail) = c->prev;
  c->prev = c->next = nullptr;
  c->in_live = false;
  --ctx->live_count;
}

// A record no channel event may reach any more: back to the pool once kQuarantine later ones have
// followed.
void quarantine_locked(ProfilerContext* ctx, CollRecord* coll) {
  unlink_live(ctx, coll);
  CollRecord*& slot = ctx->quarantine[ctx->quarantine_next];
  if (slot != nullptr) ctx->colls.give(slot);
  slot = coll;
  ctx->quarantine_next = (ctx->quarantine_next + 1) % kQuarantine;
}

// An API record's Coll (or CeColl) event took it: back to the pool.
void take_api_locked(ProfilerContext* ctx, ApiRecord* api) {
  api->waiting = false;
  --ctx->apis_waiting;
  ctx->api_records.give(api);
}

// The API record `p` names when it is one of the context's still waiting for its event, else null.
ApiRecord* waiting_api(ProfilerContext* ctx, void* p) {
  if (p == nullptr || !ctx->api_records.owns(p)) return nullptr;
  auto* api = static_cast<ApiRecord*>(p);
  return api->waiting ? api : nullptr;
}

// A call run unwatched is answered in call order (the learner numbers arrivals by call, and its log
// meets each latency with its own call's decision): once no earlier call of the communicator still
// waits for its channels, though its own record was done when it stopped.
void settle_unwatched_locked(ProfilerContext* ctx) {
  for (CollRecord* c = ctx->live_head; c != nullptr && ctx->unwatched_ready > 0;) {
    CollRecord* next = c->next;
    if (!c->captured) {
      if (!c->ready_unwatched) break;  // the oldest call still to report
      if (ctx->learner && c->key >= 0) {
        RanKnobs ran = c->ran;
        ran.watched = false;
        ctx->learner->observe_ran(c->key, ran, std::numeric_limits<double>::quiet_NaN(), c->call);
      }
      --ctx->unwatched_ready;
      quarantine_locked(ctx, c);
    }
    c = next;
  }
}

// Called with ctx->mu held when a record can be retired.
void retire_locked(ProfilerContext* ctx, CollRecord* coll) {
  if (!coll->coll_stopped || coll->stopped_channels < coll->expected_channels ||
      coll->stopped_channels < coll->started_channels || coll->ready_unwatched)
    return;
  if (!coll->watched) {  // run unwatched: no channel reports, now or in a graph's replays
    ++ctx->unwatched;
    if (coll->captured) {  // settled at its capture
      --ctx->captured_live;
      quarantine_locked(ctx, coll);
      return;
    }
    coll->ready_unwatched = true;
    ++ctx->unwatched_ready;
    settle_unwatched_locked(ctx);
    return;
  }
  // A collective whose algorithm or protocol the plugin cannot name (slot -1) still answers its call.
  if (ctx->learner && coll->key >= 0) {
    // The sweep stores float microseconds; the measured nanoseconds take the same path so that a
    // latency the replay engine sees as x arrives here as exactly x. An untimed call goes in as NaN,
    // which the learner drops and counts but still takes as its own call's answer, so the next
    // latency meets its own call's decision.
    const double us = coll->measured && !coll->untimed ? double(float(double(coll->max_ns) / 1000.0))
                                                       : std::numeric_limits<double>::quiet_NaN();
    if (coll->captured) {
      ctx->learner->observe_replay(coll->key, coll->slot, coll->bytes, us);
      ++ctx->replays;
    } else if (ctx->learner->observe_ran(coll->key, coll->ran, us, coll->call)) {
      ++ctx->delivered;
    }
  }
  if (coll->captured) {  // a replay's round of channels: the record stays for the next replay
    coll->started_channels = coll->stopped_channels = 0;
    coll->max_ns = 0;
    coll->measured = coll->untimed = false;
    return;
  }
  unlink_live(ctx, coll);
  ctx->colls.give(coll);
  settle_unwatched_locked(ctx);
}

// The context key of a call (and its bytes as the tuner saw them: x nRanks for AllGather and
// ReduceScatter); -1 when the descriptor names no collective or datatype the plugin knows.
int call_key(const ProfilerContext* ctx, const char* func, uint64_t count, const char* datatype,
             uint64_t* bytes) {
  const int coll = func ? parse_collective_name(func) : -1;
  const size_t type_size = datatype ? datatype_size(datatype) : 0;
  if (coll < 0 || type_size == 0) return -1;
  *bytes = count * type_size;
  if (coll == 2 || coll == 3) *bytes *= uint64_t(ctx->nranks);  // AllGather, ReduceScatter
  return context_key(coll, *bytes);
}

// The communicator's learner, resolved on first use: the tuner's init runs after the profiler's.
const std::shared_ptr<LatencySink>& learner_locked(ProfilerContext* ctx) {
  if (!ctx->learner)
    ctx->learner = PluginRuntime::instance().learner_for(ctx->comm_id, ctx->nranks, ctx->nnodes);
  return ctx->learner;
}

// Records that stopped with no channel started, kStaleAfter records before `newest`, wait for
// channels that will not come (a call NCCL ran unwatched though its CollApi event read otherwise):
// let go, so the ones that do report are still tracked. Their calls settle as lost in the learner.
void let_go_stale_locked(ProfilerContext* ctx, uint64_t newest) {
  for (CollRecord* c = ctx->live_head; c != nullptr && c->seq + kStaleAfter < newest;) {
    CollRecord* next = c->next;
    if (!c->captured && !c->ready_unwatched && c->coll_stopped && c->started_channels == 0) {
      quarantine_locked(ctx, c);
      ++ctx->stale;
    }
    c = next;
  }
  settle_unwatched_locked(ctx);
}

// `symmetric`: v7 says NCCL ran one of its symmetric kernels, which the tuner never saw: no general
// (algorithm, protocol) arm ran, whatever the descriptor's algorithm and protocol say, so the call is
// settled and nothing is learned from it (docs/plugin.md "When NCCL runs another arm").
// `user_tag`: v7's userProfilerTag of the call (0: none), for the decision log.
template <typename Coll>
void start_coll(ProfilerContext* ctx, void** handle, const Coll& d, void* parent, bool symmetric,
                uint64_t user_tag) {
  CollRecord made;  // filled before the lock; the pool's record is taken under it
  CollRecord* rec = &made;
  rec->owner = ctx;
  rec->expected_channels = d.nChannels;
  const int algo = d.algo ? parse_algo_name(d.algo) : -1;
  const int proto = d.proto ? parse_proto_name(d.proto) : -1;
  if (uint64_t bytes = 0; (rec->key = call_key(ctx, d.func, d.count, d.datatype, &bytes)) >= 0) {
    const bool named = algo >= 0 && proto >= 0 && !symmetric;
    rec->slot = named ? algo * 3 + proto : OnlineLearner::kUnnamedArm;
    rec->ran = named ? RanKnobs{algo, proto, d.nChannels} : RanKnobs{};
    rec->ran.symmetric = symmetric;
    rec->ran.user_tag = user_tag;
    rec->bytes = bytes;
  }
  std::lock_guard<std::mutex> lock(ctx->mu);
  if (symmetric) ++ctx->symmetric;
  learner_locked(ctx);
  if (ApiRecord* api = waiting_api(ctx, parent)) {
    rec->captured = api->graph_captured;
    rec->watched = api->watched;
    take_api_locked(ctx, api);
  }
  if (!rec->watched) rec->expected_channels = 0;
  rec->seq = ctx->next_seq++;
  if (rec->captured) {
    ++ctx->captured;
    if (ctx->learner && rec->key >= 0) ctx->learner->captured(rec->key, rec->slot);
    // A captured record stays until finalize (NCCL says nothing when a graph is destroyed), so the
    // captured ones have a budget of their own: past it a capture is still settled, and its replays
    // go unlogged, never taken for another collective's.
    if (ctx->captured_live >= kMaxCapturedCollectives) return;
    ++ctx->captured_live;
  } else {
    // Its call, taken now: Coll events start in call order, so a collective whose channels never
    // report leaves no other call answered by the wrong latency.
    if (ctx->learner && rec->key >= 0) rec->call = ctx->learner->bind_call(rec->key);
    if (ctx->live_count - ctx->captured_live >= kStaleSweepAt && ctx->mask != nullptr &&
        PluginRuntime::instance().watch_switch().active())
      let_go_stale_locked(ctx, rec->seq);
    if (ctx->live_count - ctx->captured_live >= kMaxLiveCollectives)
      return;  // channel events are not arriving: stop tracking
  }
  CollRecord* live = ctx->colls.take();
  *live = made;
  link_live(ctx, live);
  *handle = live;
}

void start_channel(ProfilerContext* ctx, void** handle, void* parent, uint64_t start_ns) {
  auto* coll = static_cast<CollRecord*>(parent);
  std::lock_guard<std::mutex> lock(ctx->mu);
  // A channel of a call whose API call read KernelCh off: NCCL instrumented it all the same (another
  // thread switched the mask in between, or this NCCL does not reload it per call). Counted: on a
  // real NCCL with one enqueuing thread the count says whether switching works.
  const bool ours = coll != nullptr && ctx->colls.owns(coll);
  if (ours && !coll->watched) ++ctx->unwatched_channels;
  if (!ours || !coll->in_live) return;  // not one of ours (or already retired)
  ChannelRecord* ch = ctx->channels.take();
  ch->owner = ctx;
  ch->coll = coll;
  ++coll->started_channels;
  ch->start_ns = start_ns;
  *handle = ch;
}

// A CollApi event (v5, v6): kept until its Coll event takes the graph flag (bounded: past
// kMaxPendingApiCalls unclaimed ones, no handle, and those collectives are taken as not captured).
// With a watch rule in the process, it also reads whether the call is watched and switches the mask
// for the call expected next (watch_switch.hpp).
template <typename CollApi>
void start_api(ProfilerContext* ctx, void** handle, const CollApi& d) {
  WatchSwitch& watch = PluginRuntime::instance().watch_switch();
  WatchSwitch::ApiCall call;
  if (ctx->mask != nullptr && watch.active()) {
    std::shared_ptr<LatencySink> learner;
    {
      std::lock_guard<std::mutex> lock(ctx->mu);
      learner = learner_locked(ctx);
    }
    uint64_t bytes = 0;
    call = watch.api_call(ctx->mask, learner, call_key(ctx, d.func, d.count, d.datatype, &bytes));
  }
  std::lock_guard<std::mutex> lock(ctx->mu);
  ctx->expected += call.predicted;
  ctx->expected_right += call.expected;
  if (ctx->apis_waiting >= kMaxPendingApiCalls) return;
  ApiRecord* api = ctx->api_records.take();
  api->graph_captured = d.graphCaptured;
  api->watched = call.watched;
  api->waiting = true;
  ++ctx->apis_waiting;
  *handle = api;
}

template <typename Descr>
nccl_result_t start_event(void* context, void** handle, Descr* d) {
  if (handle != nullptr) *handle = nullptr;
  if (context == nullptr || handle == nullptr || d == nullptr) return kNcclSuccess;
  try {
    auto* ctx = static_cast<ProfilerContext*>(context);
    const uint64_t type = uint64_t(d->type);
    if (type == kNcclProfileColl) {
      bool symmetric = false;  // v7 names the kernel that ran, and the call's tag
      uint64_t user_tag = 0;
      if constexpr (requires { d->coll.isSymColl; }) {
        symmetric = d->coll.isSymColl;
        user_tag = d->coll.userTag;
      }
      start_coll(ctx, handle, v5_part(d->coll), d->parentObj, symmetric, user_tag);
    } else if (type == kNcclProfileKernelCh) {
      start_channel(ctx, handle, d->parentObj, d->kernelCh.pTimer);
    } else if (type == kNcclProfileCeColl) {
      std::lock_guard<std::mutex> lock(ctx->mu);
      ++ctx->copy_engine;
      // Its API call's record, if any, has no Coll event to wait for.
      if (ApiRecord* api = waiting_api(ctx, d->parentObj)) take_api_locked(ctx, api);
    } else if constexpr (requires { v5_part(d->collApi).graphCaptured; }) {  // v5 and later
      if (type == kNcclProfileCollApi) start_api(ctx, handle, v5_part(d->collApi));
    }
  } catch (...) {
    *handle = nullptr;
  }
  return kNcclSuccess;
}

nccl_result_t stop_event(void* handle) {
  if (handle == nullptr) return kNcclSuccess;
  try {
    uint32_t magic;
    std::memcpy(&magic, handle, sizeof magic);
    if (magic == kApiMagic) return kNcclSuccess;  // kept until its Coll event takes it
    if (magic == kCollMagic) {
      auto* coll = static_cast<CollRecord*>(handle);
      ProfilerContext* ctx = coll->owner;
      std::lock_guard<std::mutex> lock(ctx->mu);
      coll->coll_stopped = true;
      retire_locked(ctx, coll);
    } else if (magic == kChannelMagic) {
      auto* ch = static_cast<ChannelRecord*>(handle);
      CollRecord* coll = ch->coll;
      ProfilerContext* ctx = ch->owner;
      {
        std::lock_guard<std::mutex> lock(ctx->mu);
        if (is_live(ctx, coll)) {
          if (ch->has_stop && ch->stop_ns >= ch->start_ns) {
            const uint64_t ns = ch->stop_ns - ch->start_ns;
            if (!coll->measured || ns > coll->max_ns) coll->max_ns = ns;
            coll->measured = true;
          } else {  // stopped with no KernelChStop state, or one before its start
            coll->untimed = true;
          }
          ++coll->stopped_channels;
          retire_locked(ctx, coll);
        }
        ctx->channels.give(ch);
      }
    }
  } catch (...) {
  }
  return kNcclSuccess;
}

nccl_result_t record_state(void* handle, int state, NcclProfilerEventStateArgs* args) {
  if (handle == nullptr || args == nullptr || state != kNcclProfilerKernelChStop) return kNcclSuccess;
  uint32_t magic;
  std::memcpy(&magic, handle, sizeof magic);
  if (magic != kChannelMagic) return kNcclSuccess;
  auto* ch = static_cast<ChannelRecord*>(handle);
  try {
    std::lock_guard<std::mutex> lock(ch->owner->mu);
    ch->stop_ns = args->kernelCh.pTimer;
    ch->has_stop = true;
  } catch (...) {
  }
  return kNcclSuccess;
}

// The profiler contexts handed to NCCL and not finalized yet (never destroyed, like the runtime).
LiveHandles& live_profilers() {
  static LiveHandles* handles = new LiveHandles();
  return *handles;
}

nccl_result_t init_any(void** context, int* mask, uint64_t events, uint64_t comm_id, int nnodes, int nranks,
                       int rank, nccl_logger_t logger) {
  if (context == nullptr) return kNcclSuccess;
  *context = nullptr;
  try {
    auto* ctx = new ProfilerContext();
    ctx->comm_id = comm_id;
    ctx->nranks = nranks > 0 ? nranks : 1;
    ctx->nnodes = nnodes > 0 ? nnodes : 1;
    ctx->rank = rank;
    ctx->log = PluginLog(logger);
    // One int for the whole process, which NCCL loads atomically and other communicators' inits (on
    // other threads) and the watch switch write too.
    if (mask != nullptr) std::atomic_ref<int>(*mask).store(int(events), std::memory_order_relaxed);
    // Its CollApi events say when each call loaded the mask: only then can it be switched.
    if (mask != nullptr && (events & kNcclProfileCollApi)) {
      ctx->mask = mask;
      PluginRuntime::instance().watch_switch().attach(mask);
    }
    ctx->log.init_info(
        "profiler initialised: commId 0x%llx, rank %d of %d; listening to Coll and KernelCh%s%s events",
        (unsigned long long)comm_id, rank, nranks,
        (events & kNcclProfileCollApi) ? " (and CollApi, for CUDA graphs)" : "",
        (events & kNcclProfileCeColl) ? " (and CeColl, to count)" : "");
    live_profilers().add(ctx, logger);
    *context = ctx;
  } catch (...) {
    *context = nullptr;
  }
  return kNcclSuccess;
}

constexpr uint64_t kKernelEvents = kNcclProfileColl | kNcclProfileKernelCh;

nccl_result_t init_v6(void** context, uint64_t comm_id, int* mask, const char*, int nnodes, int nranks,
                      int rank, nccl_logger_t logger) {
  return init_any(context, mask, kKernelEvents | kNcclProfileCollApi | kNcclProfileCeColl, comm_id, nnodes,
                  nranks, rank, logger);
}

nccl_result_t init_v5(void** context, uint64_t comm_id, int* mask, const char*, int nnodes, int nranks,
                      int rank, nccl_logger_t logger) {
  return init_any(context, mask, kKernelEvents | kNcclProfileCollApi, comm_id, nnodes, nranks, rank, logger);
}

nccl_result_t init_v4(void** context, int* mask, const char*, uint64_t comm_hash, int nnodes, int nranks,
                      int rank, nccl_logger_t logger) {
  return init_any(context, mask, kKernelEvents, comm_hash, nnodes, nranks, rank, logger);
}

nccl_result_t finalize(void* context) {
  if (context == nullptr) return kNcclSuccess;
  try {
    if (!live_profilers().remove(context)) {  // finalized before: nothing of it may be read
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        PluginLog(live_profilers().last_logger())
            .warn("profiler finalize of a context that is not live (finalized twice?): ignored, said once");
      return kNcclSuccess;
    }
    auto* ctx = static_cast<ProfilerContext*>(context);
    {
      std::lock_guard<std::mutex> lock(ctx->mu);
      const size_t captured_live = ctx->captured_live;
      ctx->log.info(
          "profiler finalised: commId 0x%llx, %llu latencies delivered, %zu collectives unfinished, %llu "
          "copy-engine collectives not learned (no tuner decision, no kernel channels to time), %llu "
          "symmetric-kernel collectives not learned (no arm the tuner offered), %llu "
          "CUDA-graph replays of %llu captured collectives logged and not learned (no decision of their own)",
          (unsigned long long)ctx->comm_id, (unsigned long long)ctx->delivered,
          ctx->live_count - captured_live, (unsigned long long)ctx->copy_engine,
          (unsigned long long)ctx->symmetric, (unsigned long long)ctx->replays,
          (unsigned long long)ctx->captured);
      if (ctx->unwatched + ctx->stale + ctx->expected > 0)
        ctx->log.info(
            "profiler watching: commId 0x%llx, %llu collectives run unwatched by the watch rule "
            "(settled, not learned from); the call expected next was right for %llu of %llu; %llu let go "
            "that waited for channels never coming; %llu kernel channels came of calls taken as unwatched",
            (unsigned long long)ctx->comm_id, (unsigned long long)ctx->unwatched,
            (unsigned long long)ctx->expected_right, (unsigned long long)ctx->expected,
            (unsigned long long)ctx->stale, (unsigned long long)ctx->unwatched_channels);
      if (ctx->mask != nullptr) PluginRuntime::instance().watch_switch().detach(ctx->mask);
      // The records go with the context's pools.
    }
    delete ctx;
  } catch (...) {
  }
  return kNcclSuccess;
}

}  // namespace

extern "C" {

NCCLBOT_PLUGIN_EXPORT extern const NcclProfilerV7 ncclProfiler_v7;
NCCLBOT_PLUGIN_EXPORT extern const NcclProfilerV6 ncclProfiler_v6;
NCCLBOT_PLUGIN_EXPORT extern const NcclProfilerV5 ncclProfiler_v5;
NCCLBOT_PLUGIN_EXPORT extern const NcclProfilerV4 ncclProfiler_v4;

// v7 listens to the same events as v6 (its init is v6's).
const NcclProfilerV7 ncclProfiler_v7 = {"ncclbot",  init_v6,      start_event<NcclProfilerEventDescrV7>,
                                        stop_event, record_state, finalize};
const NcclProfilerV6 ncclProfiler_v6 = {"ncclbot",  init_v6,      start_event<NcclProfilerEventDescrV6>,
                                        stop_event, record_state, finalize};
const NcclProfilerV5 ncclProfiler_v5 = {"ncclbot",  init_v5,      start_event<NcclProfilerEventDescrV5>,
                                        stop_event, record_state, finalize};
const NcclProfilerV4 ncclProfiler_v4 = {"ncclbot",  init_v4,      start_event<NcclProfilerEventDescrV4>,
                                        stop_event, record_state, finalize};

}  // extern "C"
