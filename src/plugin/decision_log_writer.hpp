#pragma once
// The plugin's decision log (NCCLBOT_LOG; the format is include/ncclbot/log/decision_log_format.hpp,
// docs/ope.md). Safe to leave on in production:
//   - append() never blocks and never does I/O: it copies one record into a bounded in-memory
//     buffer (1 MiB) and returns; a full buffer drops the record and counts it;
//   - a writer thread drains the buffer every 50 ms with whole-record writes to a file opened
//     O_APPEND | O_NOFOLLOW, so a killed job loses at most the last 50 ms and a partial record;
//   - every file is new (O_EXCL): PATH, or the first free PATH.N when PATH exists, so a run never
//     appends to a log it did not start; past the size cap (NCCLBOT_LOG_MAX_MB, default 1024) the
//     run goes on in the next free name, with its own header, and nothing is renamed or replaced.
// One log per process (every communicator of it appends to it); `%r` in the path is the rank.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ncclbot/log/decision_log_format.hpp"
#include "ncclbot/policy/thompson_win_probability.hpp"
#include "plugin/cost_table.hpp"

namespace ncclbot::plugin {

struct DecisionLogSettings {
  std::string path_pattern;  // NCCLBOT_LOG
  uint64_t max_bytes = uint64_t(1024) << 20;
  std::string header_text;  // "key=value\n" lines
  // How often the writer drains the buffer when nothing wakes it sooner (a half-full buffer or
  // queue of integrals does).
  std::chrono::milliseconds period{50};
};

class DecisionLog {
 public:
  // The log at `pattern` with `%r` replaced by `rank`; nullptr and `error` when it cannot be opened.
  static std::shared_ptr<DecisionLog> open(const DecisionLogSettings& settings, int rank, std::string* error);
  ~DecisionLog();  // writes what is buffered

  void append(const void* record, size_t bytes);
  // `r` as a knob call record (version 4): the arm that ran and, when NCCL ran another, the one
  // `decided` (r's other fields the caller's). With r.symmetric NCCL ran one of its symmetric
  // kernels, no arm: `ran` is not read, and the record names the decided arm.
  void append_knob_call(decision_log::CallRecord r, const Arm& ran, const Arm& decided) {
    r.knobs = true;
    r.slot = -1;
    if (!r.symmetric) {
      r.slot = ran.slot();
      r.channels = ran.channels;
      r.chunk_bytes = ran.chunk_bytes;
      r.overridden = !(ran == decided);
    }
    if (r.overridden || r.symmetric) {
      r.decided_slot = decided.slot();
      r.decided_channels = decided.channels;
      r.decided_chunk_bytes = decided.chunk_bytes;
    }
    unsigned char out[decision_log::kKnobCallRecordBytes];
    append(out, decision_log::encode_call(r, out));
  }
  // A call record whose propensity is the win probability of `contest` (Thompson sampling): the
  // integral is computed by the writer thread, never by the caller. Dropped (counted) when full.
  void append_deferred(const decision_log::CallRecord& record, const ThompsonContest& contest);
  void flush();  // writes what is buffered now (a communicator's finalize)
  // A measured call that is not logged because its probability was lost (counted with the drops).
  void drop() { ++dropped_; }

  // The file written now (PATH or PATH.N): a copy, since the writer thread moves on to a new name
  // past the size cap.
  std::string path() const {
    std::lock_guard<std::mutex> io(io_mu_);
    return path_;
  }
  uint64_t dropped() const { return dropped_.load(); }              // records, buffer full
  uint64_t failed_writes() const { return failed_writes_.load(); }  // batches the file refused
  uint64_t written() const { return written_.load(); }

  // The file path for `pattern` and `rank` (`%r` -> rank, `%%` -> %).
  static std::string expand(const std::string& pattern, int rank);

 private:
  DecisionLog() = default;
  bool open_file(std::string* error);
  void drain_locked(std::unique_lock<std::mutex>& lock);
  void run();
  bool room_locked(size_t bytes);

  std::string base_;   // PATH: the pattern with the rank filled in
  std::string path_;   // the file written now
  int next_name_ = 0;  // the suffix the next file tries first (0: PATH itself)
  DecisionLogSettings settings_;
  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<unsigned char> buffer_;
  struct Deferred {
    size_t offset;  // of its call record in buffer_
    ThompsonContest contest;
  };
  std::vector<Deferred> deferred_;  // bounded by kDeferredCap
  bool stop_ = false;
  mutable std::mutex io_mu_;  // one writer at a time (the thread, flush(), the destructor); guards path_
  std::atomic<uint64_t> dropped_{0}, failed_writes_{0}, written_{0};
  std::thread writer_;
};

// The sizes of one context whose cost tables a decision log holds, each with NCCL's pick there.
class LoggedSizes {
 public:
  // NCCL's pick (-1: none) for a call of `collective` of `bytes` on communicator `comm_hash` of `nnodes`
  // nodes and `nranks` ranks; at a size's first call, NCCL's cost table `table` as this call passed it
  // is appended to `log` first, as a context record. A call of the last call's size (most are) costs
  // one comparison.
  int nccl_pick(DecisionLog& log, uint64_t comm_hash, int collective, uint64_t bytes, int nnodes, int nranks,
                const CostTable& table) {
    return last_.first == bytes ? last_.second
                                : find_or_log(log, comm_hash, collective, bytes, nnodes, nranks, table);
  }

 private:
  int find_or_log(DecisionLog& log, uint64_t comm_hash, int collective, uint64_t bytes, int nnodes,
                  int nranks, const CostTable& table);
  std::vector<std::pair<uint64_t, int8_t>> sizes_;
  std::pair<uint64_t, int8_t> last_{UINT64_MAX, -1};  // the size of the last call asked about
};

}  // namespace ncclbot::plugin
