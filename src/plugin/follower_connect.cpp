// How a follower's link reaches the leader: connecting, the handshake that proves both hold the
// job's secret, taking a verified connection over, and reconnecting after a break.
#include <netdb.h>
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "plugin/follower_link.hpp"
#include "plugin/leader_socket.hpp"

namespace ncclbot::plugin {
namespace {

// Bounds the socket's receives, sends and connect() by the time left until `deadline`, at least
// 50 ms.
void set_deadline_timeouts(int s, std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
          .count();
  const long ms = left < 50 ? 50 : left;
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// On the connected socket s: reads the leader's greeting, answers with a fresh nonce (the bytes go
// through `first_bytes`) and verifies the leader's WELCOME, then lifts the socket's timeouts. true +
// `session` when it authenticates; false + `why` otherwise, with `bad_secret` set when the WELCOME
// fails authentication. The caller closes s on failure. Runs without the link's lock.
bool leader_handshake(int s, const LeaderKey& key, std::vector<uint8_t>& first_bytes,
                      std::unique_ptr<FollowerSession>* session, std::string* why, bool* bad_secret) {
  uint8_t greeting[kGreetingBytes], nonce[kNonceBytes];
  uint8_t welcome[kFrameHeaderBytes + kWelcomePayload + kTagBytes];
  randombytes_buf(nonce, sizeof nonce);
  auto candidate = std::make_unique<FollowerSession>(key);
  first_bytes.clear();
  errno = 0;
  if (!read_full(s, greeting, sizeof greeting) ||
      !candidate->start(greeting, sizeof greeting, nonce, &first_bytes) ||
      !write_full(s, first_bytes.data(), first_bytes.size()) || !read_full(s, welcome, sizeof welcome)) {
    *why = errno != 0 ? std::strerror(errno) : "not an ncclbot leader of this version";
    return false;
  }
  size_t used = 0;
  WireHello unused;
  WireDecisions none;
  if (candidate->feed(welcome, sizeof welcome, &used, &unused, &none) != FollowerSession::Event::kWelcome) {
    *why = "its WELCOME fails authentication: this rank holds another secret than the leader";
    *bad_secret = true;
    return false;
  }
  timeval none_tv{0, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &none_tv, sizeof none_tv);
  ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &none_tv, sizeof none_tv);
  *session = std::move(candidate);
  return true;
}

}  // namespace

std::shared_ptr<FollowerLink> FollowerLink::connect(const std::string& address, const LeaderKey& key,
                                                    int timeout_ms, std::string* error) {
  std::string host;
  int port = 0;
  if (!split_address(address, &host, &port)) {
    *error = "NCCLBOT_LEADER='" + address + "' is not host:port";
    return nullptr;
  }
  if (sodium_init() < 0) {
    *error = "libsodium cannot initialise";
    return nullptr;
  }
  std::shared_ptr<FollowerLink> link(new FollowerLink());
  link->address_ = address;
  link->key_ = key;
  std::unique_lock<std::mutex> lock(link->mu_);
  if (!link->open_locked(lock, timeout_ms, true, error)) return nullptr;
  return link;
}

// Connects, reads the greeting, answers with this side's nonce, verifies the leader's WELCOME and
// starts the receiver. Called with the lock held; releases it while connecting. Also keeps the
// streak of refused connections that tells a leader process that is gone.
bool FollowerLink::open_locked(std::unique_lock<std::mutex>& lock, int timeout_ms, bool first,
                               std::string* error) {
  std::string host;
  int port = 0;
  split_address(address_, &host, &port);
  const auto limit = std::chrono::milliseconds(timeout_ms);
  const auto deadline = Clock::now() + limit;
  Clock::time_point refused_since = refused_since_;
  bool gone = false, bad_secret = false, unresolved = false;
  std::string why = "no answer";
  lock.unlock();
  int fd = -1;
  std::unique_ptr<FollowerSession> session;
  std::vector<uint8_t> first_bytes;
  for (;;) {
    addrinfo* res = resolve(host, port, false, error);
    if (!res) {
      refused_since = Clock::time_point::max();  // no answer at all is not a refusal
      unresolved = true;
      break;
    }
    bool all_refused = true;  // every address answered "nobody listens here"
    for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
      const int s = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (s < 0) {
        all_refused = false;
        continue;
      }
      // The greeting and the WELCOME must come in time; SO_SNDTIMEO also bounds connect(), which
      // a host that vanished would otherwise leave waiting for minutes.
      set_deadline_timeouts(s, deadline);
      if (::connect(s, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != ECONNREFUSED) all_refused = false;
        why = std::strerror(errno);
        ::close(s);
        continue;
      }
      all_refused = false;
      if (!leader_handshake(s, key_, first_bytes, &session, &why, &bad_secret)) {
        ::close(s);
        continue;
      }
      fd = s;
    }
    ::freeaddrinfo(res);
    const auto now = Clock::now();
    if (!all_refused)
      refused_since = Clock::time_point::max();
    else if (refused_since == Clock::time_point::max())
      refused_since = now;
    if (fd >= 0) break;
    // Only once the leader was reached: at init it may simply not listen yet (and nothing was sent).
    if (!first && all_refused && now - refused_since >= limit) {
      gone = true;
      break;
    }
    // Nothing was sent on the first connection, so another secret is final there; later, a forged
    // WELCOME must not end the wait of a rank the leader may have counted.
    if ((first && bad_secret) || now >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the leader may not listen yet
  }
  lock.lock();
  refused_since_ = refused_since;
  if (gone) gone_ = true;
  if (fd < 0) {
    if (gone)
      *error = "the leader at " + address_ + " refused every connection for " + std::to_string(timeout_ms) +
               " ms: its process is gone";
    else if (!unresolved)
      *error = "cannot reach the leader at " + address_ + ": " + why;
    return false;
  }
  adopt_connection_locked(fd, std::move(session));
  return true;
}

// Makes the verified connection `fd` (with its session) the link's own, shutting the old one down,
// and starts its receiver. Called with mu_ held (from open_locked).
void FollowerLink::adopt_connection_locked(int fd, std::unique_ptr<FollowerSession> session) {
  set_nodelay(fd);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // its receiver closes it
  fd_ = fd;
  session_ = std::move(session);
  broken_ = false;
  const uint64_t generation = ++generation_;
  outbox_.clear();              // encoded for the old connection's session
  for (auto& entry : streams_)  // requests lost with the old connection are asked again
    for (Slot& slot : entry.second.slots)
      if (!slot.received) slot.ask_after = Clock::time_point::min();
  // The receiver holds the link alive and closes its own descriptor when the connection ends.
  std::thread([self = shared_from_this(), fd, generation] {
    try {
      self->receive_loop(fd, generation);
    } catch (...) {  // out of memory: this connection ends, the next decision reconnects
      std::lock_guard<std::mutex> lock(self->mu_);
      if (generation == self->generation_) {
        self->broken_ = true;
        self->fd_ = -1;
        self->cv_.notify_all();
      }
      ::close(fd);
    }
  }).detach();
}

// Reopens a broken connection and sends again every HELLO that may have been counted (the leader
// counts each (rank, ordinal) once and ACKs a repeat). One thread at a time; the others wait.
void FollowerLink::reconnect_locked(std::unique_lock<std::mutex>& lock, int timeout_ms) {
  reconnecting_ = true;
  std::string error;
  if (open_locked(lock, timeout_ms, false, &error)) {
    for (const auto& entry : hellos_)
      if (entry.second.said == Said::kSent || entry.second.said == Said::kAcked)
        session_->hello(entry.second.hello, &outbox_);
    flush(lock);
  }
  reconnecting_ = false;
  cv_.notify_all();
}

}  // namespace ncclbot::plugin
