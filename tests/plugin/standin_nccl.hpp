#pragma once
// A stand-in for NCCL: drives the built plugin through its tuner and profiler in the order NCCL
// 2.27-2.31 makes the calls (NCCL src/enqueue.cc, NCCL src/plugin/profiler.cc and NCCL
// src/plugin/tuner.cc; the ABI as plugin/nccl_abi.hpp declares it), without a GPU:
//   communicator init   profiler init, then tuner init; finalize: tuner, then profiler; every
//                       profiler init gets the address of one process-wide activation mask;
//   a collective        the mask loaded when it is called (NCCL src/enqueue.cc collTaskAppend), then
//                       CollApi start (graphCaptured) and stop (v5 and later, when the mask it loaded
//                       has CollApi; its kernel channels report only when it had KernelCh); at group
//                       end, for each collective of the group: getCollInfo (numPipeOps = the
//                       group's size), getChunkSize (v6 tuner), NCCL's pick = the cheapest entry the
//                       tuner left; then the Coll event (parentObj: its CollApi handle) started and
//                       stopped, then per kernel channel: KernelCh start (parentObj: the Coll
//                       handle), recordEventState(KernelChStop) with the stop timer, stop;
//   graph capture       the same with graphCaptured set and no kernel channels; each replay of the
//                       graph runs the channels again under the captured Coll handles, with no
//                       tuner call;
//   copy-engine (v6)    CollApi start and stop, CeColl start (parentObj: its CollApi handle) and
//                       stop; no tuner call, no kernel channels;
//   symmetric kernels   (price_symmetric_kernels, 2.31 on) one more modelled time per collective,
//                       never shown to the tuner; it runs when below every entry the tuner left;
//   another arm         (run_instead) NCCL runs an arm other than the tuner's pick, as a registered
//                       buffer, a user restriction or a symmetric kernel makes it: the Coll event
//                       names the arm that ran, getChunkSize is asked for it, its channels time it;
//   channels            NCCL's own count (2 unless set) when the tuner leaves nChannels 0, else the
//                       tuner's, at most a cap (NCCL's overrides: small messages, 32 KiB cells);
//                       the Coll event announces that many and that many kernel channels report
//                       (none, when told to lose them), right away or after later calls started.
// Every plugin call's result is counted; a failure is any result other than success.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "plugin/kernel_channel_event.hpp"
#include "plugin/plugin_loader.hpp"

namespace ncclbot::test {

struct NcclRelease {
  const char* name;
  int tuner, profiler;  // the ABI versions that release binds (docs/plugin.md "Which NCCL binds what")
};
inline constexpr NcclRelease kNccl227{"2.27", 4, 4}, kNccl228{"2.28", 5, 5}, kNccl229{"2.29", 5, 6},
    kNccl230{"2.30", 6, 6}, kNccl231{"2.31", 6, 7};

// The arm run_instead() returns for a kernel the plugin cannot name (no (algorithm, protocol) pair):
// its Coll event names the algorithm "SYMK_LD".
inline constexpr int kStandInUnnamedArm = -2;
// The arm run_instead() returns for one of NCCL 2.31's symmetric kernels: profiler v7 says so
// (isSymColl, kernelVariant "SYMK_LD") and names the tuner's pick as the algorithm and protocol, the
// worst case for a plugin that would credit by those names; before v7 it is an unnamed kernel.
inline constexpr int kStandInSymmetricArm = -3;

// NCCL's ncclProfilerEventMask: one int for the process, whose address every profiler init gets.
inline int standin_event_mask = 0;

struct StandInOp {
  int coll = 4;         // ncclFunc_t: 4 = AllReduce
  size_t bytes = 4096;  // as the tuner sees them (int8 elements, so count = bytes per rank)
};

class StandInNccl {
 public:
  StandInNccl(NcclRelease release, uint64_t comm_id, int nranks, int nnodes)
      : release_(release), nranks_(nranks), nnodes_(nnodes) {
    const Plugin& p = plugin();
    int* mask = &standin_event_mask;
    if (release.profiler == 4)
      count(p.prof4->init(&prof_, mask, "stand-in", comm_id, nnodes, nranks, 0, recording_logger));
    else if (release.profiler == 5)
      count(p.prof5->init(&prof_, comm_id, mask, "stand-in", nnodes, nranks, 0, recording_logger));
    else if (release.profiler == 6)
      count(p.prof6->init(&prof_, comm_id, mask, "stand-in", nnodes, nranks, 0, recording_logger));
    else
      count(p.prof7->init(&prof_, comm_id, mask, "stand-in", nnodes, nranks, 0, recording_logger));
    mask_ = uint64_t(unsigned(*mask));
    if (release.tuner == 4)
      count(p.v4->init(size_t(nranks), size_t(nnodes), recording_logger, &tuner_));
    else if (release.tuner == 5)
      count(p.v5->init(&tuner_, comm_id, size_t(nranks), size_t(nnodes), recording_logger, nullptr, nullptr));
    else
      count(p.v6->init(&tuner_, comm_id, size_t(nranks), size_t(nnodes), recording_logger, nullptr, nullptr));
  }
  ~StandInNccl() {
    while (!deferred_.empty()) run_deferred();  // the GPU finishes before the communicator goes
    const Plugin& p = plugin();
    if (release_.tuner == 4)
      count(p.v4->destroy(tuner_));
    else if (release_.tuner == 5)
      count(p.v5->finalize(tuner_));
    else
      count(p.v6->finalize(tuner_));
    finalize_profiler();
  }
  StandInNccl(const StandInNccl&) = delete;
  StandInNccl& operator=(const StandInNccl&) = delete;

  // One group of collectives, all with cost table `table`; `latency_us(i, arm)` is what collective
  // i's slowest channel takes. Returns the arms NCCL ran. Captured: no channels now (see replay()).
  template <typename Latency>
  std::vector<int> group(const std::vector<StandInOp>& ops, const CostTable7x3& table, bool captured,
                         Latency latency_us) {
    std::vector<void*> apis(ops.size(), nullptr);
    std::vector<bool> watched(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const uint64_t loaded = load_mask();
      watched[i] = (loaded & kNcclProfileKernelCh) != 0;
      apis[i] = start_api(ops[i], captured, loaded);
    }
    std::vector<int> arms;
    for (size_t i = 0; i < ops.size(); ++i) {
      CostTable7x3 t = table;
      int channels = 0;
      count(get_coll_info(ops[i], int(ops.size()), t, &channels));
      ++tuner_calls_;
      for (int s = 0; s < 21; ++s)  // an entry NCCL removed stays removed
        if (table.t[s / 3][s % 3] < 0.0f && t.t[s / 3][s % 3] >= 0.0f) ++revived_;
      const int pick = t.pick();
      int arm = ran_ ? ran_(pick, table) : pick;
      // NCCL 2.31's rule: a symmetric kernel priced below every entry the tuner left runs instead.
      if (symmetric_us_ && arm == pick && pick >= 0) {
        const float sym = symmetric_us_(tuner_calls_ - 1);
        if (sym >= 0.0f && sym < t.t[pick / 3][pick % 3]) arm = kStandInSymmetricArm;
      }
      picks_.push_back(pick);
      arms.push_back(arm);
      pick_ = pick;
      tuner_channels_ = channels;
      ran_channels_ = channels > 0 ? std::min(channels, channel_cap_) : nccl_channels_;
      ran_chunk_ = nccl_chunk_;
      if (release_.tuner == 6 && arm >= 0) {
        size_t chunk = nccl_chunk_;
        // Per channel, as NCCL asks outside CollNet: nChannels 1 and the channel's bytes.
        count(plugin().v6->getChunkSize(tuner_, ops[i].coll, ops[i].bytes / size_t(ran_channels_), arm / 3,
                                        arm % 3, 1, &chunk));
        if (chunk != nccl_chunk_) ++chunks_changed_;
        ran_chunk_ = chunk;
      }
      void* coll = start_coll(ops[i], arm, apis[i]);
      count(stop(coll));
      watched_calls_ += watched[i];
      if (captured)
        captured_.push_back({coll, arm, ops[i], watched[i]});
      else if ((watched[i] || instrument_all_) && defer_ > 0)
        deferred_.push_back({coll, latency_us(i, arm), ran_channels_});
      else if (watched[i] || instrument_all_)
        run_channels(coll, latency_us(i, arm));
      else
        ran_unwatched(ops[i], arm);
    }
    while (deferred_.size() > size_t(defer_)) run_deferred();
    return arms;
  }

  // One replay of the captured graph: every captured collective's channels, latency_us(i, arm).
  template <typename Latency>
  void replay(Latency latency_us) {
    for (size_t i = 0; i < captured_.size(); ++i)
      if (captured_[i].watched) run_channels(captured_[i].coll, latency_us(i, captured_[i].arm));
  }

  // A collective NCCL runs on the copy engines (NCCL 2.29 and later): no tuner call.
  void copy_engine(const StandInOp& op) {
    void* api = start_api(op, false, load_mask());
    if (release_.profiler < 6) return;
    void* h = nullptr;
    const auto fill = [&](auto& d, auto& ce) {
      std::memset(&d, 0, sizeof d);
      d.type = kNcclProfileCeColl;
      d.parentObj = api;
      ce.func = "AllGather";
      ce.count = op.bytes;
      ce.datatype = "ncclInt8";
    };
    if (release_.profiler == 6) {
      NcclProfilerEventDescrV6 d;
      fill(d, d.ceColl);
      count(plugin().prof6->startEvent(prof_, &h, &d));
    } else {
      NcclProfilerEventDescrV7 d;
      fill(d, d.ceColl.v6);
      count(plugin().prof7->startEvent(prof_, &h, &d));
    }
    count(stop(h));
  }

  // From now on NCCL runs ran(pick, offered) instead of the tuner's pick (`offered`: the table NCCL
  // passed the tuner); an empty function runs the pick.
  void run_instead(std::function<int(int pick, const CostTable7x3& offered)> ran) { ran_ = std::move(ran); }
  // NCCL 2.31 and later: the modelled time of the cheapest symmetric kernel for the `call`-th
  // collective (negative: none), which NCCL never shows the tuner and runs when it is below every
  // entry of the table the tuner returned (NCCL src/tuning/tuning.cc: the minimum over all ids).
  void price_symmetric_kernels(std::function<float(long call)> us) { symmetric_us_ = std::move(us); }
  // Profiler v7: each collective's userProfilerTag, by its sequence number (the call's
  // ncclCollConfig_t tag; 0 without this).
  void user_tags(std::function<uint64_t(uint64_t seq)> tag) { user_tag_ = std::move(tag); }
  // The tuner's pick of every collective so far, in call order.
  const std::vector<int>& picks() const { return picks_; }

  // Profiler finalize now (the destructor's, once), so its line can be read before the tuner's.
  void finalize_profiler() {
    if (prof_ == nullptr) return;
    while (!deferred_.empty()) run_deferred();
    const Plugin& p = plugin();
    count(release_.profiler == 4   ? p.prof4->finalize(prof_)
          : release_.profiler == 5 ? p.prof5->finalize(prof_)
          : release_.profiler == 6 ? p.prof6->finalize(prof_)
                                   : p.prof7->finalize(prof_));
    prof_ = nullptr;
  }

  // The next collective's channels report `ns` as their stop timer (a timer gone wrong: UINT64_MAX).
  void stop_next_channels_at(uint64_t ns) { stop_override_ns_ = ns; }
  // The next collective's first `channels` kernel channels go wrong: a stop timer before their
  // start, or a stop with no KernelChStop state.
  enum class ChannelFault { kStopBeforeStart, kNoStopState };
  void fault_next_channels(ChannelFault fault, int channels) {
    fault_ = fault;
    faulty_channels_ = channels;
  }
  // NCCL's own channel count, the most channels it runs whatever the tuner says, and its chunk size
  // on getChunkSize's entry.
  void set_channels(int nccl_own, int cap) {
    nccl_channels_ = nccl_own;
    channel_cap_ = cap;
  }
  void set_nccl_chunk(size_t bytes) { nccl_chunk_ = bytes; }
  // The next collective's kernel channels never report (events lost): its Coll event starts and
  // stops, and no latency can come for it.
  void lose_next_channels() { lose_channels_ = true; }
  // Every collective's kernel channels report, whatever mask its API call loaded: as when another
  // thread switched KernelCh between NCCL's load and the CollApi event the plugin reads it in.
  void instrument_every_call(bool all) { instrument_all_ = all; }
  // A collective's kernel channels report only after the next `calls` collectives have started (a
  // GPU behind the enqueuing thread); the rest before the profiler's finalize.
  void defer_channels(int calls) { defer_ = calls; }
  // What the collective being timed runs: its channel count and chunk size (for a latency function).
  int ran_channels() const { return ran_channels_; }
  int tuner_channels() const { return tuner_channels_; }  // what the tuner wrote into nChannels
  size_t ran_chunk() const { return ran_chunk_; }
  int failures() const { return failures_; }
  int revived() const { return revived_; }
  int chunks_changed() const { return chunks_changed_; }
  long tuner_calls() const { return tuner_calls_; }
  uint64_t mask() const { return mask_; }
  // Collectives whose API call loaded KernelCh (their kernels were instrumented) so far.
  long watched_calls() const { return watched_calls_; }
  // A collective run unwatched: each (context key, arm) as it ran, in call order.
  struct Unwatched {
    StandInOp op;
    int arm;
  };
  const std::vector<Unwatched>& unwatched() const { return unwatched_; }

 private:
  struct Captured {
    void* coll;
    int arm;
    StandInOp op;
    bool watched;  // its kernel instrumented at capture: each replay's channels report
  };
  struct Deferred {
    void* coll;
    double latency_us;
    int channels;
  };
  void run_deferred() {
    const Deferred d = deferred_.front();
    deferred_.erase(deferred_.begin());
    const int now = ran_channels_;
    ran_channels_ = d.channels;
    run_channels(d.coll, d.latency_us);
    ran_channels_ = now;
  }
  uint64_t load_mask() const {
    return uint64_t(unsigned(__atomic_load_n(&standin_event_mask, __ATOMIC_RELAXED)));
  }
  void ran_unwatched(const StandInOp& op, int arm) {
    unwatched_.push_back({op, arm});
    clock_ns_ += 1000;
  }

  void count(nccl_result_t r) { failures_ += r != kNcclSuccess; }

  nccl_result_t get_coll_info(const StandInOp& op, int pipe_ops, CostTable7x3& t, int* channels) {
    const Plugin& p = plugin();
    if (release_.tuner == 4)
      return p.v4->getCollInfo(tuner_, op.coll, op.bytes, pipe_ops, t.ptr(), 7, 3, 0, channels);
    if (release_.tuner == 5)
      return p.v5->getCollInfo(tuner_, op.coll, op.bytes, pipe_ops, t.ptr(), 7, 3, 0, channels);
    return p.v6->getCollInfo(tuner_, op.coll, op.bytes, pipe_ops, t.ptr(), 7, 3, 0, channels);
  }

  static const char* func_name(int coll) {
    static const char* const names[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
    return coll >= 0 && coll < 5 ? names[coll] : "AllReduce";
  }

  template <typename Descr>
  nccl_result_t start(void** handle, Descr* d) {
    const Plugin& p = plugin();
    if constexpr (std::is_same_v<Descr, NcclProfilerEventDescrV4>)
      return p.prof4->startEvent(prof_, handle, d);
    else if constexpr (std::is_same_v<Descr, NcclProfilerEventDescrV5>)
      return p.prof5->startEvent(prof_, handle, d);
    else if constexpr (std::is_same_v<Descr, NcclProfilerEventDescrV6>)
      return p.prof6->startEvent(prof_, handle, d);
    else
      return p.prof7->startEvent(prof_, handle, d);
  }
  nccl_result_t stop(void* handle) {
    const Plugin& p = plugin();
    return release_.profiler == 4   ? p.prof4->stopEvent(handle)
           : release_.profiler == 5 ? p.prof5->stopEvent(handle)
           : release_.profiler == 6 ? p.prof6->stopEvent(handle)
                                    : p.prof7->stopEvent(handle);
  }
  nccl_result_t record_stop(void* handle, uint64_t ns) {
    NcclProfilerEventStateArgs args;
    std::memset(&args, 0, sizeof args);
    args.kernelCh.pTimer = ns;
    const Plugin& p = plugin();
    return release_.profiler == 4   ? p.prof4->recordEventState(handle, kNcclProfilerKernelChStop, &args)
           : release_.profiler == 5 ? p.prof5->recordEventState(handle, kNcclProfilerKernelChStop, &args)
           : release_.profiler == 6 ? p.prof6->recordEventState(handle, kNcclProfilerKernelChStop, &args)
                                    : p.prof7->recordEventState(handle, kNcclProfilerKernelChStop, &args);
  }

  // The count NCCL's events carry: int8 elements per rank (the tuner's bytes / nRanks for AllGather
  // and ReduceScatter).
  size_t element_count(const StandInOp& op) const {
    return (op.coll == 2 || op.coll == 3) ? op.bytes / size_t(nranks_) : op.bytes;
  }

  template <typename Descr>
  void* api_event(const StandInOp& op, bool captured) {
    Descr d;
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileCollApi;
    auto& api = v5_part(d.collApi);
    api.func = func_name(op.coll);
    api.count = element_count(op);
    api.datatype = "ncclInt8";
    api.graphCaptured = captured;
    void* h = nullptr;
    count(start(&h, &d));
    if (h != nullptr) count(stop(h));  // NCCL stops it when the call returns, before group end
    return h;
  }
  void* start_api(const StandInOp& op, bool captured, uint64_t loaded) {
    if (!(loaded & kNcclProfileCollApi)) return nullptr;
    if (release_.profiler == 5) return api_event<NcclProfilerEventDescrV5>(op, captured);
    if (release_.profiler == 6) return api_event<NcclProfilerEventDescrV6>(op, captured);
    if (release_.profiler == 7) return api_event<NcclProfilerEventDescrV7>(op, captured);
    return nullptr;
  }

  template <typename Descr>
  void* coll_event(const StandInOp& op, int arm, void* api) {
    static const char* const algos[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                        "NVLSTree", "PAT"};
    static const char* const protos[] = {"LL", "LL128", "Simple"};
    Descr d;
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileColl;
    d.parentObj = api;
    auto& c = v5_part(d.coll);
    c.seqNumber = seq_++;
    if constexpr (std::is_same_v<Descr, NcclProfilerEventDescrV7>)
      if (user_tag_) d.coll.userTag = user_tag_(c.seqNumber);
    c.func = func_name(op.coll);
    c.count = element_count(op);
    c.datatype = "ncclInt8";
    c.nChannels = uint8_t(ran_channels_);
    c.algo = arm >= 0 ? algos[arm / 3] : arm == kStandInUnnamedArm ? "SYMK_LD" : "Ring";
    c.proto = arm >= 0 ? protos[arm % 3] : "Simple";
    if (arm == kStandInSymmetricArm) {
      if constexpr (std::is_same_v<Descr, NcclProfilerEventDescrV7>) {
        d.coll.isSymColl = true;
        d.coll.kernelVariant = "SYMK_LD";
        c.algo = pick_ >= 0 ? algos[pick_ / 3] : "Ring";
        c.proto = pick_ >= 0 ? protos[pick_ % 3] : "Simple";
      } else {
        c.algo = "SYMK_LD";
      }
    }
    void* h = nullptr;
    count(start(&h, &d));
    return h;
  }
  void* start_coll(const StandInOp& op, int arm, void* api) {
    if (release_.profiler == 4) return coll_event<NcclProfilerEventDescrV4>(op, arm, api);
    if (release_.profiler == 5) return coll_event<NcclProfilerEventDescrV5>(op, arm, api);
    if (release_.profiler == 6) return coll_event<NcclProfilerEventDescrV6>(op, arm, api);
    return coll_event<NcclProfilerEventDescrV7>(op, arm, api);
  }

  template <typename Descr>
  void channel(void* coll, int ch, uint64_t span_ns) {
    Descr k = plugin::kernel_channel_start<Descr>(coll, ch, clock_ns_);
    void* h = nullptr;
    count(start(&h, &k));
    const bool faulty = ch < faulty_channels_;
    if (faulty && fault_ == ChannelFault::kStopBeforeStart)
      count(record_stop(h, clock_ns_ - 1));
    else if (!faulty)
      count(record_stop(h, stop_override_ns_ != 0 ? stop_override_ns_ : clock_ns_ + span_ns));
    count(stop(h));
  }
  // The collective's channels; the last one spans the latency, the others half of it (whole
  // microseconds, exact in float).
  void run_channels(void* coll, double latency_us) {
    const uint64_t ns = uint64_t(latency_us * 1000.0);
    for (int ch = 0; ch < ran_channels_ && !lose_channels_; ++ch) {
      const uint64_t span = ch + 1 < ran_channels_ ? ns / 2 : ns;
      if (release_.profiler == 4)
        channel<NcclProfilerEventDescrV4>(coll, ch, span);
      else if (release_.profiler == 5)
        channel<NcclProfilerEventDescrV5>(coll, ch, span);
      else if (release_.profiler == 6)
        channel<NcclProfilerEventDescrV6>(coll, ch, span);
      else
        channel<NcclProfilerEventDescrV7>(coll, ch, span);
    }
    clock_ns_ += ns + 1000;
    stop_override_ns_ = 0;
    faulty_channels_ = 0;
    lose_channels_ = false;
  }

  const NcclRelease release_;
  const int nranks_, nnodes_;
  void* tuner_ = nullptr;
  void* prof_ = nullptr;
  uint64_t mask_ = 0, seq_ = 0, clock_ns_ = 1000000, stop_override_ns_ = 0;
  int failures_ = 0, revived_ = 0, chunks_changed_ = 0, faulty_channels_ = 0;
  int nccl_channels_ = 2, channel_cap_ = 64, ran_channels_ = 2, tuner_channels_ = 0;
  int pick_ = -1;  // the tuner's pick of the collective being started
  size_t nccl_chunk_ = 131072, ran_chunk_ = 131072;
  ChannelFault fault_ = ChannelFault::kNoStopState;
  bool lose_channels_ = false, instrument_all_ = false;
  int defer_ = 0;
  std::vector<Deferred> deferred_;
  long tuner_calls_ = 0, watched_calls_ = 0;
  std::vector<Captured> captured_;
  std::vector<Unwatched> unwatched_;
  std::function<int(int, const CostTable7x3&)> ran_;
  std::function<float(long)> symmetric_us_;
  std::function<uint64_t(uint64_t)> user_tag_;
  std::vector<int> picks_;
};

}  // namespace ncclbot::test
