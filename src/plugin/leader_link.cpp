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

// The server: one epoll thread, every connection a LeaderSession.
class Server {
 public:
  Server(int listen_fd, const LeaderKey& key, const LeaderHandler& handler, const LeaderLimits& limits)
      : listen_fd_(listen_fd), key_(key), handler_(handler), limits_(limits) {}

  void run() {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) return;
    watch(listen_fd_, EPOLLIN, EPOLL_CTL_ADD);
    epoll_event events[64];
    for (;;) {
      const int n = ::epoll_wait(epoll_, events, 64, 500);
      if (n < 0 && errno != EINTR) return;
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
        // Out of descriptors: the listening socket stays readable, so pause rather than spin.
        if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
  if (!link->open_locked(lock, timeout_ms, error)) return nullptr;
  return link;
}

// Connects, reads the greeting, answers with this side's nonce and starts the receiver. Called
// with the lock held; releases it while connecting.
bool FollowerLink::open_locked(std::unique_lock<std::mutex>& lock, int timeout_ms, std::string* error) {
  std::string host;
  int port = 0;
  split_address(address_, &host, &port);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string why = "no answer";
  lock.unlock();
  int fd = -1;
  std::unique_ptr<FollowerSession> session;
  std::vector<uint8_t> first;
  for (;;) {
    addrinfo* res = resolve(host, port, false, error);
    if (!res) {
      lock.lock();
      return false;
    }
    for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
      const int s = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (s < 0) continue;
      timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
      ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);  // the greeting must come in time
      uint8_t greeting[kGreetingBytes], nonce[kNonceBytes];
      randombytes_buf(nonce, sizeof nonce);
      auto candidate = std::make_unique<FollowerSession>(key_);
      first.clear();
      if (::connect(s, ai->ai_addr, ai->ai_addrlen) == 0 && read_full(s, greeting, sizeof greeting) &&
          candidate->start(greeting, sizeof greeting, nonce, &first) &&
          write_full(s, first.data(), first.size())) {
        timeval none{0, 0};
        ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
        fd = s;
        session = std::move(candidate);
        break;
      }
      why = errno != 0 ? std::strerror(errno) : "not an ncclbot leader of this version";
      ::close(s);
    }
    ::freeaddrinfo(res);
    if (fd >= 0 || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the leader may not listen yet
  }
  lock.lock();
  if (fd < 0) {
    *error = "cannot reach the leader at " + address_ + ": " + why;
    return false;
  }
  set_nodelay(fd);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // its receiver closes it
  fd_ = fd;
  session_ = std::move(session);
  broken_ = false;
  acked_.clear();
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
  return true;
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
  return !broken_;
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
      if (e == FollowerSession::Event::kAck) acked_.insert({ack.comm_id, ack.ordinal});
      if (e == FollowerSession::Event::kDecisions) {
        Stream& s = streams_[{d.comm_id, int(d.key)}];
        const uint64_t w = d.start / uint64_t(kDecisionWindow);
        if (d.status == DecisionStatus::kOk) {
          s.requested.erase(w);
          s.windows[w].assign(d.slots, d.slots + kDecisionWindow);
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

void FollowerLink::request_locked(Stream& s, uint64_t comm_id, int key, uint64_t window, uint64_t bytes,
                                  int nranks, int nnodes, const float* prior) {
  auto it = s.requested.find(window);
  if (broken_ || (it != s.requested.end() && Clock::now() < it->second)) return;
  WireRequest r;
  r.comm_id = comm_id;
  r.start = window * uint64_t(kDecisionWindow);
  r.bytes = bytes;
  r.key = uint32_t(key);
  r.count = uint32_t(kDecisionWindow);
  r.nranks = uint32_t(nranks);
  r.nnodes = uint32_t(nnodes);
  std::memcpy(r.prior, prior, sizeof r.prior);
  std::vector<uint8_t> out;
  session_->request(r, &out);
  if (send_locked(out)) s.requested[window] = Clock::time_point::max();
}

bool FollowerLink::hello(const WireHello& h, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (broken_) return false;
  const uint64_t generation = generation_;
  std::vector<uint8_t> bytes;
  session_->hello(h, &bytes);
  if (!send_locked(bytes)) return false;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!acked_.count({h.comm_id, h.ordinal})) {
    if (broken_ && generation == generation_) return false;  // closed without an ACK: refused
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  // Sent, and ACKed or unanswered within the timeout: the leader may count this rank, so from now
  // on this rank follows it (an unanswered HELLO is sent again after a reconnect).
  joined_.push_back(h);
  return true;
}

int FollowerLink::decision(uint64_t comm_id, int key, uint64_t index, uint64_t bytes, int nranks, int nnodes,
                           const float* prior, int timeout_ms, const std::function<void(int)>& waiting) {
  const uint64_t w = index / uint64_t(kDecisionWindow);
  const bool prefetch = index % uint64_t(kDecisionWindow) >= uint64_t(kDecisionWindow / 2);
  const auto started = Clock::now();
  auto next_warning = started + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (broken_ && !reconnecting_) {
      // One thread reconnects and announces this process's ranks again (the leader counts each
      // (rank, ordinal) once); the others wait for it.
      reconnecting_ = true;
      std::string error;
      if (open_locked(lock, timeout_ms, &error)) {
        std::vector<uint8_t> bytes;
        for (const WireHello& h : joined_) session_->hello(h, &bytes);
        send_locked(bytes);
      }
      reconnecting_ = false;
      cv_.notify_all();
    }
    Stream& s = streams_[{comm_id, key}];
    auto it = s.windows.find(w);
    if (it != s.windows.end()) {
      const int slot = it->second[size_t(index - w * uint64_t(kDecisionWindow))];
      // Windows two behind are not needed by this rank again (a slower rank of the same
      // communicator in this process asks for them again).
      while (!s.windows.empty() && s.windows.begin()->first + 2 < w) s.windows.erase(s.windows.begin());
      if (prefetch && !s.windows.count(w + 1))
        request_locked(s, comm_id, key, w + 1, bytes, nranks, nnodes, prior);
      return slot;
    }
    request_locked(s, comm_id, key, w, bytes, nranks, nnodes, prior);
    cv_.wait_for(lock, std::chrono::milliseconds(broken_ ? 20 : 1));
    const auto now = Clock::now();
    if (now >= next_warning) {
      const int waited = int(std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count());
      next_warning = now + std::chrono::milliseconds(timeout_ms);
      lock.unlock();
      if (waiting) waiting(waited);
      lock.lock();
    }
  }
}

}  // namespace ncclbot::plugin
