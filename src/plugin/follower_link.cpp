// A follower's link once connected (follower_connect.cpp): sending, the receiver thread, HELLOs and
// the windows of decisions.
#include "plugin/follower_link.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "plugin/leader_socket.hpp"

namespace ncclbot::plugin {

FollowerLink::~FollowerLink() = default;

void FollowerLink::flush() {
  std::lock_guard<std::mutex> send(send_mu_);
  int fd;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (outbox_.empty()) return;
    sending_.swap(outbox_);  // the outbox takes the other buffer's capacity, emptied
    fd = fd_;
    generation = generation_;
    if (!can_send_locked()) {  // a new connection sends its own HELLOs again
      sending_.clear();
      return;
    }
  }
  // The receiver closes this descriptor only under send_mu_, so it is still this connection's.
  const bool sent = write_full(fd, sending_.data(), sending_.size());
  sending_.clear();
  if (!sent) {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation == generation_) {
      broken_ = true;
      cv_.notify_all();
    }
  }
}

bool FollowerLink::healthy() {
  std::lock_guard<std::mutex> lock(mu_);
  return !broken_ && !gone_;
}

bool FollowerLink::leader_gone() {
  return gone_.load();
}

void FollowerLink::break_connection_for_test() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void FollowerLink::receive_loop(int fd, uint64_t generation) {
  // A receiver of an older connection only ever marks its own generation broken.
  uint8_t buf[4096];
  for (;;) {
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    std::lock_guard<std::mutex> lock(mu_);
    if (generation != generation_) break;
    size_t at = 0;
    bool bad = false;
    while (at < size_t(r)) {
      size_t used = 0;
      WireHello ack;
      WireDecisions d;
      const auto e = session_->feed(buf + at, size_t(r) - at, &used, &ack, &d);
      at += used;
      if (e == FollowerSession::Event::kBad) {
        bad = true;
        break;
      }
      if (e == FollowerSession::Event::kAck || e == FollowerSession::Event::kRefused) {
        // A rank once counted stays counted (a repeat is always ACKed), so an ACK is final; a
        // REFUSED only ever answers a HELLO the leader never counted.
        auto it = hellos_.find({ack.comm_id, ack.ordinal});
        if (it != hellos_.end() && it->second.said != Said::kAcked && it->second.said != Said::kRefused)
          it->second.said = e == FollowerSession::Event::kAck ? Said::kAcked : Said::kRefused;
      }
      if (e == FollowerSession::Event::kDecisions) {
        Stream& s = streams_[{d.comm_id, d.ordinal, int(d.key)}];
        const uint64_t w = d.start / uint64_t(kLeaderWindow);
        Slot& slot = s.at(w);
        // An answer for a window older than the one its slot now waits for is not wanted any more.
        if (slot.window == UINT64_MAX || slot.window <= w) {
          if (slot.window != w) slot = Slot{w};
          if (d.status == DecisionStatus::kOk) {
            std::copy(d.arms, d.arms + kLeaderWindow, slot.arms.begin());
            slot.received = true;
          } else {  // too far ahead of the leader for now: ask again shortly
            slot.ask_after = Clock::now() + std::chrono::milliseconds(2);
          }
        }
      }
      if (e == FollowerSession::Event::kNone) break;
    }
    cv_.notify_all();
    if (bad) break;
  }
  {
    // Forget the descriptor before closing it, so no sender can reach a reused number; and only
    // while no write is using it.
    std::lock_guard<std::mutex> send(send_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    if (generation == generation_) {
      broken_ = true;
      fd_ = -1;
      cv_.notify_all();
    }
    ::close(fd);
  }
}

void FollowerLink::request_locked(Stream& s, const WireHello& who, int key, uint64_t window, uint64_t bytes,
                                  const float* prior) {
  Slot& slot = s.at(window);
  if (slot.window != window) slot = Slot{window};  // an older window's slot: no longer wanted
  if (slot.received || slot.ask_after == Clock::time_point::max() || !can_send_locked()) return;
  if (slot.ask_after != Clock::time_point::min() && Clock::now() < slot.ask_after) return;
  WireRequest r;
  r.comm_id = who.comm_id;
  r.start = window * uint64_t(kLeaderWindow);
  r.bytes = bytes;
  r.key = uint32_t(key);
  r.count = uint32_t(kLeaderWindow);
  r.nranks = who.nranks;
  r.nnodes = who.nnodes;
  r.rank = who.rank;
  r.ordinal = who.ordinal;
  std::memcpy(r.prior, prior, sizeof r.prior);
  session_->request(r, &outbox_);
  slot.ask_after = Clock::time_point::max();  // a failed write breaks the connection; a new one asks again
}

FollowerLink::Joined FollowerLink::hello(const WireHello& h, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::pair<uint64_t, uint32_t> id{h.comm_id, h.ordinal};
  Announced& a = hellos_[id];  // map entries stay put
  a.hello = h;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (a.said == Said::kAcked) return Joined::kAcked;
    if (a.said == Said::kRefused) return Joined::kRefused;
    const auto now = Clock::now();
    if (gone_ || now >= deadline) {
      // Never sent: the leader cannot have counted it. Sent: it may have, so this rank follows
      // the leader unless the leader is gone.
      if (a.said == Said::kUnsent) {
        hellos_.erase(id);
        return gone_ ? Joined::kLeaderGone : Joined::kUnreached;
      }
      return gone_ ? Joined::kLeaderGone : Joined::kPending;
    }
    if (broken_) {
      if (!reconnecting_)
        reconnect_locked(
            lock, int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1);
      if (broken_) cv_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(20)));
      continue;
    }
    if (a.said == Said::kUnsent) {
      if (can_send_locked()) {
        session_->hello(h, &outbox_);
        a.said = Said::kSent;  // a failed write breaks the connection, and a new one sends it again
      }
      flush(lock);
      continue;
    }
    cv_.wait_until(lock, deadline);
  }
}

namespace {

void count_wait(FollowerWaits* waits, std::chrono::steady_clock::time_point since) {
  const auto ns = uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
  waits->waited.fetch_add(1, std::memory_order_relaxed);
  uint64_t longest = waits->longest_ns.load(std::memory_order_relaxed);
  while (ns > longest && !waits->longest_ns.compare_exchange_weak(longest, ns, std::memory_order_relaxed)) {
  }
}

}  // namespace

DecidedArm FollowerLink::decision(const WireHello& who, int key, uint64_t index, uint64_t bytes,
                                  const float* prior, int timeout_ms, FunctionRef<void(int)> waiting,
                                  FollowerWaits* waits) {
  const uint64_t w = index / uint64_t(kLeaderWindow);
  // The lookahead: window k goes out at call kW - P, so by this call every window up to `ahead`.
  const uint64_t ahead = (index + uint64_t(kLeaderPrefetch)) / uint64_t(kLeaderWindow);
  if (waits) waits->decisions.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  Stream& s = streams_[{who.comm_id, who.ordinal, key}];
  if (s.holds(w)) {  // the common case: the lookahead brought the window in time
    const DecidedArm arm = s.decided(index);
    for (uint64_t k = w + 1; k <= ahead; ++k)
      if (!s.holds(k)) request_locked(s, who, key, k, bytes, prior);
    flush(lock);
    return arm;
  }
  // The window is not there: this call waits for it.
  const auto started = Clock::now();
  auto next_warning = started + std::chrono::milliseconds(timeout_ms);
  const std::pair<uint64_t, uint32_t> id{who.comm_id, who.ordinal};
  bool slept = false;
  for (;;) {
    // The two ways out, both matched by the leader's ranks (see the header comment).
    if (gone_) break;
    if (auto h = hellos_.find(id); h != hellos_.end() && h->second.said == Said::kRefused) break;
    if (broken_ && !reconnecting_) {
      reconnect_locked(lock, timeout_ms);
      if (gone_) break;
    }
    for (uint64_t k = w; k <= ahead; ++k)  // nothing while broken
      if (!s.holds(k)) request_locked(s, who, key, k, bytes, prior);
    flush(lock);
    if (!s.holds(w)) cv_.wait_for(lock, std::chrono::milliseconds(broken_ ? 20 : 1));
    slept = true;
    if (s.holds(w)) {
      const DecidedArm arm = s.decided(index);
      lock.unlock();
      if (waits) count_wait(waits, started);
      return arm;
    }
    const auto now = Clock::now();
    if (now >= next_warning) {
      const int waited = int(std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count());
      next_warning = now + std::chrono::milliseconds(timeout_ms);
      lock.unlock();
      if (waiting) waiting(waited);
      lock.lock();
    }
  }
  lock.unlock();
  if (waits && slept) count_wait(waits, started);  // passing through at once is no wait
  return DecidedArm{};
}

}  // namespace ncclbot::plugin
