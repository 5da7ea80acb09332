#include "plugin/leader_server.hpp"

#include <netdb.h>
#include <sodium.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "plugin/leader_socket.hpp"

namespace ncclbot::plugin {
namespace {

// The server: one epoll thread, every connection a LeaderSession.
class Server {
  using Clock = std::chrono::steady_clock;

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

}  // namespace ncclbot::plugin
