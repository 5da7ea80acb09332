#include "plugin/leader_link.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace ncclbot::plugin {
namespace {

using Clock = std::chrono::steady_clock;

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

// One follower connection on the leader: HELLOs and requests in, decision windows out.
void serve_connection(int fd, const LeaderHandler& handler) {
  std::vector<int8_t> out;
  for (;;) {
    uint32_t head[2];
    if (!read_full(fd, head, sizeof head) || head[0] != kWireMagic) break;
    if (head[1] == 1) {
      WireHello h;
      std::memcpy(&h, head, sizeof head);
      if (!read_full(fd, reinterpret_cast<char*>(&h) + sizeof head, sizeof h - sizeof head)) break;
      handler.hello(h.comm_id, int(h.nranks), int(h.nnodes));
    } else if (head[1] == 2) {
      WireRequest r;
      std::memcpy(&r, head, sizeof head);
      if (!read_full(fd, reinterpret_cast<char*>(&r) + sizeof head, sizeof r - sizeof head)) break;
      if (r.count == 0 || r.count > uint32_t(kDecisionWindow)) break;
      out.assign(r.count, int8_t(-1));
      handler.decide(r, out.data());
      const WireDecisions d{kWireMagic, 3, r.comm_id, r.start, r.key, r.count};
      if (!write_full(fd, &d, sizeof d) || !write_full(fd, out.data(), out.size())) break;
    } else {
      break;
    }
  }
  ::close(fd);
}

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

bool LeaderServer::start(const std::string& address, LeaderHandler handler, std::string* error) {
  std::string host;
  int port = 0;
  if (!split_address(address, &host, &port)) {
    *error = "NCCLBOT_LEADER='" + address + "' is not host:port";
    return false;
  }
  addrinfo* res = resolve(host, port, true, error);
  if (!res) return false;
  int fd = -1;
  std::string why = "no usable address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
    why = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    *error = "cannot listen on " + address + ": " + why;
    return false;
  }
  // The server lives as long as the process (the library is linked -z nodelete).
  auto shared = std::make_shared<const LeaderHandler>(std::move(handler));
  std::thread([fd, shared] {
    for (;;) {
      const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
        break;
      }
      set_nodelay(c);
      std::thread([c, shared] { serve_connection(c, *shared); }).detach();
    }
  }).detach();
  return true;
}

std::shared_ptr<FollowerLink> FollowerLink::connect(const std::string& address, int timeout_ms,
                                                    std::string* error) {
  std::string host;
  int port = 0;
  if (!split_address(address, &host, &port)) {
    *error = "NCCLBOT_LEADER='" + address + "' is not host:port";
    return nullptr;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string why;
  for (;;) {
    addrinfo* res = resolve(host, port, false, error);
    if (!res) return nullptr;
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        ::freeaddrinfo(res);
        set_nodelay(fd);
        std::shared_ptr<FollowerLink> link(new FollowerLink());
        link->fd_ = fd;
        // The receiver holds the link alive; it ends when the leader closes the connection.
        std::thread([link] { link->receive_loop(); }).detach();
        return link;
      }
      why = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(res);
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the leader may not listen yet
  }
  *error = "cannot reach the leader at " + address + ": " + why;
  return nullptr;
}

FollowerLink::~FollowerLink() {
  if (fd_ >= 0) ::close(fd_);
}

bool FollowerLink::healthy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !broken_;
}

void FollowerLink::hello(uint64_t comm_id, int nranks, int nnodes) {
  const WireHello h{kWireMagic, 1, comm_id, uint32_t(nranks), uint32_t(nnodes)};
  std::lock_guard<std::mutex> lock(send_mu_);
  if (!write_full(fd_, &h, sizeof h)) {
    std::lock_guard<std::mutex> l2(mu_);
    broken_ = true;
    cv_.notify_all();
  }
}

bool FollowerLink::send_request(uint64_t comm_id, int key, uint64_t window, uint64_t bytes, int nranks,
                                int nnodes, const float* prior) {
  WireRequest r{};
  r.magic = kWireMagic;
  r.kind = 2;
  r.comm_id = comm_id;
  r.start = window * uint64_t(kDecisionWindow);
  r.bytes = bytes;
  r.key = uint32_t(key);
  r.count = kDecisionWindow;
  r.nranks = uint32_t(nranks);
  r.nnodes = uint32_t(nnodes);
  std::memcpy(r.prior, prior, sizeof r.prior);
  std::lock_guard<std::mutex> lock(send_mu_);
  return write_full(fd_, &r, sizeof r);
}

void FollowerLink::receive_loop() {
  std::vector<int8_t> buf;
  for (;;) {
    WireDecisions d;
    if (!read_full(fd_, &d, sizeof d) || d.magic != kWireMagic || d.kind != 3 ||
        d.count != uint32_t(kDecisionWindow) || d.start % uint64_t(kDecisionWindow) != 0)
      break;
    buf.resize(d.count);
    if (!read_full(fd_, buf.data(), buf.size())) break;
    std::lock_guard<std::mutex> lock(mu_);
    Stream& s = streams_[{d.comm_id, int(d.key)}];
    const uint64_t w = d.start / uint64_t(kDecisionWindow);
    s.requested.erase(w);
    s.windows[w] = buf;
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  broken_ = true;
  cv_.notify_all();
}

bool FollowerLink::decision(uint64_t comm_id, int key, uint64_t index, uint64_t bytes, int nranks, int nnodes,
                            const float* prior, int timeout_ms, int* slot) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const uint64_t w = index / uint64_t(kDecisionWindow);
  const bool prefetch = index % uint64_t(kDecisionWindow) >= uint64_t(kDecisionWindow / 2);
  std::unique_lock<std::mutex> lock(mu_);
  Stream& s = streams_[{comm_id, key}];
  for (;;) {
    if (broken_) return false;
    // Ask for the needed window, and for the next one once half of this one is used.
    for (uint64_t want : {w, w + 1}) {
      if (want == w + 1 && !prefetch) continue;
      if (s.windows.count(want) || s.requested.count(want)) continue;
      s.requested[want] = true;
      lock.unlock();
      const bool sent = send_request(comm_id, key, want, bytes, nranks, nnodes, prior);
      lock.lock();
      if (!sent) {
        broken_ = true;
        return false;
      }
    }
    auto it = s.windows.find(w);
    if (it != s.windows.end()) {
      *slot = it->second[index - w * uint64_t(kDecisionWindow)];
      // Bounded memory: windows two behind are not needed by this rank again (a slower rank of
      // the same communicator in this process simply asks for them again).
      while (!s.windows.empty() && s.windows.begin()->first + 2 < w) s.windows.erase(s.windows.begin());
      return true;
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !s.windows.count(w)) return false;
  }
}

}  // namespace ncclbot::plugin
