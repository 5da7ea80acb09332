#include "plugin/leader_link.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>
#include <unordered_map>

namespace ncclbot::plugin {
namespace {

using Clock = std::chrono::steady_clock;

bool write_full(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool read_full(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

addrinfo* resolve(const std::string& host, int port, bool passive, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return nullptr;
  }
  return res;
}

// Bounds the socket's receives, sends and connect() by the time left until `deadline`, at least
// 50 ms.
void set_deadline_timeouts(int s, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
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

// The server: one epoll thread, every connection a LeaderSession.
class Server {
 public:
  Server(int listen_fd, const LeaderKey& key, const LeaderHandler& handler, const LeaderLimits& limits)
      : listen_fd_(listen_fd), key_(key), handler_(handler), limits_(limits) {}

  // Never returns, and never closes the listening socket: followers take "connection refused" on
  // the leader's port for the leader process being gone, so a live one must keep listening
  // through every error (out of descriptors, out of memory), backing off instead.
  void run() {
    for (;;) {
      epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
      if (epoll_ >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = listen_fd_;
        if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, listen_fd_, &ev) == 0) break;
        ::close(epoll_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    epoll_event events[64];
    for (;;) {
      const int n = ::epoll_wait(epoll_, events, 64, 500);
      if (n < 0) {
        if (errno != EINTR) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      for (int i = 0; i < n; ++i) {
        try {
          if (events[i].data.fd == listen_fd_)
            accept_all();
          else
            serve(events[i].data.fd, events[i].events);
        } catch (...) {  // a failure on one connection (e.g. out of memory) closes that one only
          if (events[i].data.fd != listen_fd_) close_conn(events[i].data.fd);
        }
      }
      try {
        expire_handshakes();
      } catch (...) {
      }
    }
  }

 private:
  struct Conn {
    std::unique_ptr<LeaderSession> session;
    std::vector<uint8_t> out;
    size_t sent = 0;
    Clock::time_point opened;
    uint64_t serial = 0;  // tells this connection from a later one that reuses its descriptor
    bool authenticated = false;
  };

  void watch(int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_, op, fd, &ev);
  }

  void accept_all() {
    for (;;) {
      const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) {
        // A connection that died in the queue: take the next one.
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
        // Out of descriptors or memory: the connection waits in the queue and the listening socket
        // stays readable, so pause rather than spin (and never close it, see run()).
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;  // EAGAIN: nothing more to accept
      }
      if (conns_.size() >= limits_.max_connections) {
        ::close(c);
        continue;
      }
      while (pending_.size() >= limits_.max_unauthenticated) {  // evict the oldest stranger
        const auto [old, serial] = pending_.front();
        pending_.pop_front();
        auto it = conns_.find(old);
        if (it != conns_.end() && it->second.serial == serial && !it->second.authenticated) close_conn(old);
      }
      set_nodelay(c);
      uint8_t nonce[kNonceBytes];
      randombytes_buf(nonce, sizeof nonce);
      Conn conn;
      conn.session = std::make_unique<LeaderSession>(key_, nonce);
      conn.out = conn.session->greeting();
      conn.opened = Clock::now();
      conn.serial = ++serial_;
      pending_.emplace_back(c, conn.serial);
      conns_.emplace(c, std::move(conn));
      watch(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_ADD);
    }
  }

  void close_conn(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(it);
  }

  bool flush(int fd, Conn& c) {
    while (c.sent < c.out.size()) {
      const ssize_t w = ::send(fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (w <= 0) return false;
      c.sent += size_t(w);
    }
    if (c.sent == c.out.size()) {
      c.out.clear();
      c.sent = 0;
    }
    return c.out.size() - c.sent <= limits_.max_output_bytes;
  }

  void serve(int fd, uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (events & (EPOLLERR | EPOLLHUP)) return close_conn(fd);
    if (events & EPOLLIN) {
      uint8_t buf[4096];
      for (int round = 0; round < 16; ++round) {  // bounded per event: others get their turn
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (r <= 0) return close_conn(fd);
        if (!c.session->feed(buf, size_t(r), handler_, &c.out)) {
          flush(fd, c);  // answers to the frames before the bad one still go out
          return close_conn(fd);
        }
        c.authenticated = c.authenticated || c.session->authenticated();
      }
    }
    if (!flush(fd, c)) return close_conn(fd);
    watch(fd, c.out.empty() ? EPOLLIN : EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
  }

  void expire_handshakes() {
    const auto now = Clock::now();
    while (!pending_.empty()) {
      const auto [fd, serial] = pending_.front();
      auto it = conns_.find(fd);
      if (it == conns_.end() || it->second.serial != serial || it->second.authenticated) {
        pending_.pop_front();
        continue;
      }
      if (now - it->second.opened < std::chrono::milliseconds(limits_.handshake_ms)) break;
      pending_.pop_front();
      close_conn(fd);
    }
  }

  int listen_fd_;
  int epoll_ = -1;
  LeaderKey key_;
  LeaderHandler handler_;
  LeaderLimits limits_;
  std::unordered_map<int, Conn> conns_;
  std::deque<std::pair<int, uint64_t>> pending_;  // (descriptor, serial) in order of arrival
  uint64_t serial_ = 0;
};

}  // namespace

bool split_address(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 >= address.size()) return false;
  const std::string p = address.substr(colon + 1);
  int v = 0;
  for (char c : p) {
    if (c < '0' || c > '9' || v > 65535) return false;
    v = v * 10 + (c - '0');
  }
  if (v <= 0 || v > 65535) return false;
  *host = address.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']')
    *host = host->substr(1, host->size() - 2);
  *port = v;
  return true;
}

bool LeaderServer::start(const std::string& address, const LeaderKey& key, const LeaderHandler& handler,
                         const LeaderLimits& limits, std::string* error) {
  std::string host;
  int port = 0;
  if (!split_address(address, &host, &port)) {
    *error = "NCCLBOT_LEADER='" + address + "' is not host:port";
    return false;
  }
  if (sodium_init() < 0) {
    *error = "libsodium cannot initialise";
    return false;
  }
  addrinfo* res = resolve(host, port, true, error);
  if (!res) return false;
  int fd = -1;
  std::string why = "no usable address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 512) == 0) break;
    why = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    *error = "cannot listen on " + address + ": " + why;
    return false;
  }
  try {
    // The server lives as long as the process (the library is linked -z nodelete).
    auto server = std::make_shared<Server>(fd, key, handler, limits);
    std::thread([server] {
      try {
        server->run();
      } catch (...) {
      }
    }).detach();
  } catch (const std::exception& e) {
    ::close(fd);
    *error = std::string("cannot start the leader thread: ") + e.what();
    return false;
  }
  return true;
}

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
  for (auto& entry : streams_) entry.second.requested.clear();  // lost with the old connection
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
    std::vector<uint8_t> bytes;
    for (const auto& entry : hellos_)
      if (entry.second.said == Said::kSent || entry.second.said == Said::kAcked)
        session_->hello(entry.second.hello, &bytes);
    if (!bytes.empty()) send_locked(bytes);
  }
  reconnecting_ = false;
  cv_.notify_all();
}

FollowerLink::~FollowerLink() = default;

bool FollowerLink::send_locked(const std::vector<uint8_t>& bytes) {
  if (broken_ || fd_ < 0 || !write_full(fd_, bytes.data(), bytes.size())) {
    broken_ = true;
    cv_.notify_all();
    return false;
  }
  return true;
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
        if (d.status == DecisionStatus::kOk) {
          s.requested.erase(w);
          s.windows[w].assign(d.slots, d.slots + kLeaderWindow);
        } else {  // too far ahead of the leader for now: ask again shortly
          s.requested[w] = Clock::now() + std::chrono::milliseconds(2);
        }
      }
      if (e == FollowerSession::Event::kNone) break;
    }
    cv_.notify_all();
    if (bad) break;
  }
  {
    // Forget the descriptor before closing it, so no sender can reach a reused number.
    std::lock_guard<std::mutex> lock(mu_);
    if (generation == generation_) {
      broken_ = true;
      fd_ = -1;
      cv_.notify_all();
    }
  }
  ::close(fd);
}

void FollowerLink::request_locked(Stream& s, const WireHello& who, int key, uint64_t window, uint64_t bytes,
                                  const float* prior) {
  auto it = s.requested.find(window);
  if (broken_ || (it != s.requested.end() && Clock::now() < it->second)) return;
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
  std::vector<uint8_t> out;
  session_->request(r, &out);
  if (send_locked(out)) s.requested[window] = Clock::time_point::max();
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
      std::vector<uint8_t> bytes;
      session_->hello(h, &bytes);
      if (send_locked(bytes)) a.said = Said::kSent;
      continue;
    }
    cv_.wait_until(lock, deadline);
  }
}

namespace {

void count_wait(FollowerWaits* waits, Clock::time_point since) {
  const auto ns =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count());
  waits->waited.fetch_add(1, std::memory_order_relaxed);
  uint64_t longest = waits->longest_ns.load(std::memory_order_relaxed);
  while (ns > longest && !waits->longest_ns.compare_exchange_weak(longest, ns, std::memory_order_relaxed)) {
  }
}

}  // namespace

int FollowerLink::decision(const WireHello& who, int key, uint64_t index, uint64_t bytes, const float* prior,
                           int timeout_ms, const std::function<void(int)>& waiting, FollowerWaits* waits) {
  const uint64_t w = index / uint64_t(kLeaderWindow);
  // The lookahead: window k goes out at call kW - P, so by this call every window up to `ahead`.
  const uint64_t ahead = (index + uint64_t(kLeaderPrefetch)) / uint64_t(kLeaderWindow);
  if (waits) waits->decisions.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  Stream& s = streams_[{who.comm_id, who.ordinal, key}];
  auto it = s.windows.find(w);
  if (it != s.windows.end()) {  // the common case: the lookahead brought the window in time
    const int slot = it->second[size_t(index - w * uint64_t(kLeaderWindow))];
    // Call indices only grow: the windows before this one are not needed again.
    while (s.windows.begin()->first < w) s.windows.erase(s.windows.begin());
    for (uint64_t k = w + 1; k <= ahead; ++k)
      if (!s.windows.count(k)) request_locked(s, who, key, k, bytes, prior);
    return slot;
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
      if (!s.windows.count(k)) request_locked(s, who, key, k, bytes, prior);
    cv_.wait_for(lock, std::chrono::milliseconds(broken_ ? 20 : 1));
    slept = true;
    it = s.windows.find(w);
    if (it != s.windows.end()) {
      const int slot = it->second[size_t(index - w * uint64_t(kLeaderWindow))];
      while (s.windows.begin()->first < w) s.windows.erase(s.windows.begin());
      lock.unlock();
      if (waits) count_wait(waits, started);
      return slot;
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
  return -1;
}

}  // namespace ncclbot::plugin
