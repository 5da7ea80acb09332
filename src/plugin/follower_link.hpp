#pragma once
// Rank agreement for online mode over TCP, a follower's end (docs/plugin.md "Rank consistency" and
// "Security model"): every rank but the leader (leader_server.hpp) asks it for its decisions and
// plays exactly them.
//
// - A follower says nothing before the leader's WELCOME proves, on that connection, that both hold
//   the same secret; a rank with another secret therefore never sends a HELLO and passes through.
// - A follower announces each communicator rank it holds (HELLO). Once a HELLO has gone out the
//   leader may count it, so the rank follows the leader from then on (deciding alone could split
//   the ranks), with exactly two ways out, both of which the leader's ranks match: an
//   authenticated REFUSED (never counted), or a leader process that is gone (reconnecting is
//   answered "connection refused", nobody listening on its port, for a whole timeout: every
//   communicator it was part of is broken for NCCL itself, and the others it always answered
//   with NCCL's choice). A broken connection is reopened and the HELLOs are sent again (the
//   leader counts each (rank, ordinal) once and ACKs a repeat); a leader that is slow, stalled
//   or unreachable without refusals is waited for, with a warning once per timeout period.
// - Decisions are fetched per rank in windows of kLeaderWindow calls, each asked for
//   kLeaderPrefetch calls before its first call (replay/leader_protocol.hpp), so the answer is
//   normally back before it is needed; each request carries the rank's cost table (the leader
//   starts a context only once it has every rank's). A decision whose window is not there yet
//   waits for it, and FollowerWaits counts how often that happened.
// - The hot path neither allocates nor touches the socket under the link's lock: messages are
//   encoded under it into an outbox, in order, and whoever sends next takes the whole outbox and
//   writes it after letting the lock go (a second lock keeps the writes in order and keeps the
//   receiver from closing a descriptor a write is using); a stream keeps its windows in a ring.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/function_ref.hpp"
#include "plugin/leader_wire.hpp"

namespace ncclbot::plugin {

// How often a follower's decisions had to wait for their window (the lookahead did not bring it in
// time), for the finalize line. Updated by FollowerLink::decision, read at any time.
struct FollowerWaits {
  std::atomic<uint64_t> decisions{0};  // calls of decision()
  std::atomic<uint64_t> waited{0};     // of which found their window missing
  std::atomic<uint64_t> longest_ns{0};
};

class FollowerLink : public std::enable_shared_from_this<FollowerLink> {
 public:
  // Connects to host:port, reads the leader's greeting and verifies its WELCOME, retrying until
  // `timeout_ms` (a WELCOME that fails authentication ends at once: another secret); nullptr +
  // `error` on failure (nothing was said to the leader, so this rank is not counted).
  static std::shared_ptr<FollowerLink> connect(const std::string& address, const LeaderKey& key,
                                               int timeout_ms, std::string* error);

  enum class Joined {
    kAcked,       // counted: follow the leader
    kPending,     // sent, not answered within the timeout: the leader may count it, so follow it
    kRefused,     // an authenticated REFUSED: never counted, pass through
    kUnreached,   // never sent (no verified connection within the timeout): pass through
    kLeaderGone,  // sent, then the leader process went away (see above): pass through
  };
  // Announces one rank and waits up to `timeout_ms` for the leader's answer, reconnecting and
  // sending the HELLO again when the connection breaks first.
  Joined hello(const WireHello& h, int timeout_ms);

  // The leader's decision for call `index` of context `key` of the rank `who` (as announced): an arm
  // (with its channels and chunk over knob arms), or NCCL's choice. Asks for every window up to the
  // one holding call index + kLeaderPrefetch that is neither held nor asked for already, so window k
  // goes out at call kW - P. Waits as long as it takes for the window of `index` (see the header
  // comment); `waiting` is called once per `timeout_ms` waited. NCCL's choice at once when the rank's
  // HELLO was refused or the leader is gone.
  // `waits` (may be null) counts the call, and whether and how long it waited.
  DecidedArm decision(const WireHello& who, int key, uint64_t index, uint64_t bytes, const float* prior,
                      int timeout_ms, FunctionRef<void(int waited_ms)> waiting,
                      FollowerWaits* waits = nullptr);

  // Whether the current connection is up (a broken one is reopened by the next decision).
  bool healthy();
  // Whether the leader process is gone (connections refused for a whole timeout after a HELLO).
  bool leader_gone();

  // Test hook: close the current connection as a network failure would.
  void break_connection_for_test();

  ~FollowerLink();

 private:
  using Clock = std::chrono::steady_clock;
  // One window of a stream: asked for, and its decisions once received.
  struct Slot {
    uint64_t window = UINT64_MAX;  // the window it holds or waits for (UINT64_MAX: none)
    bool received = false;
    // When it may be asked for (again): min() at once, max() while an answer is due.
    Clock::time_point ask_after = Clock::time_point::min();
    std::array<DecidedArm, kLeaderWindow> arms{};
  };
  // A stream's calls never look more than kLeaderPrefetch / kLeaderWindow + 1 windows ahead, and
  // call indices only grow, so a ring of this many slots holds every window still wanted.
  static constexpr size_t kSlots = 16;
  struct Stream {
    std::array<Slot, kSlots> slots;
    Slot& at(uint64_t window) { return slots[window % kSlots]; }
    bool holds(uint64_t window) {
      const Slot& s = at(window);
      return s.window == window && s.received;
    }
    // The decision for call `index`, whose window the stream holds.
    DecidedArm decided(uint64_t index) {
      const uint64_t w = index / uint64_t(kLeaderWindow);
      return at(w).arms[size_t(index - w * uint64_t(kLeaderWindow))];
    }
  };
  // Where a HELLO stands. Once kSent it may have been counted, and it is sent again on every new
  // connection until answered.
  enum class Said { kUnsent, kSent, kAcked, kRefused };
  struct Announced {
    WireHello hello;
    Said said = Said::kUnsent;
  };
  FollowerLink() = default;
  // `first`: the link's first connection, where a WELCOME failing authentication ends the attempts
  // at once (nothing was sent, so passing through is safe); on reconnects it is one more failure.
  bool open_locked(std::unique_lock<std::mutex>& lock, int timeout_ms, bool first, std::string* error);
  // Makes a verified connection the link's own and starts its receiver; with mu_ held.
  void adopt_connection_locked(int fd, std::unique_ptr<FollowerSession> session);
  void reconnect_locked(std::unique_lock<std::mutex>& lock, int timeout_ms);
  void receive_loop(int fd, uint64_t generation);
  // Whether messages can go out now (queued in the outbox, in the order they were encoded).
  bool can_send_locked() const { return !broken_ && fd_ >= 0; }
  // Writes the whole outbox to the connection; called without mu_. A failed write breaks the
  // connection it was meant for.
  void flush();
  // flush() from a caller holding `lock` on mu_, which it takes again after.
  void flush(std::unique_lock<std::mutex>& lock) {
    if (outbox_.empty()) return;
    lock.unlock();
    flush();
    lock.lock();
  }
  void request_locked(Stream& s, const WireHello& who, int key, uint64_t window, uint64_t bytes,
                      const float* prior);

  std::string address_;
  LeaderKey key_;
  int fd_ = -1;
  uint64_t generation_ = 0;
  bool broken_ = true;
  bool reconnecting_ = false;
  std::atomic<bool> gone_{false};  // read without the lock on the follower's hot path
  // Since when every connection attempt was refused (time_point::max(): the last one was not).
  Clock::time_point refused_since_ = Clock::time_point::max();
  std::unique_ptr<FollowerSession> session_;
  std::mutex mu_;
  // Encoded messages not written yet (under mu_), and what a writer took from it (under send_mu_);
  // both keep their capacity, so steady state allocates nothing. Lock order: send_mu_, then mu_.
  std::vector<uint8_t> outbox_, sending_;
  std::mutex send_mu_;
  std::condition_variable cv_;
  std::map<std::pair<uint64_t, uint32_t>, Announced> hellos_;      // by (comm id, ordinal)
  std::map<std::tuple<uint64_t, uint32_t, int>, Stream> streams_;  // by (comm id, ordinal, key)
};

}  // namespace ncclbot::plugin
