#pragma once
// A TCP port on 127.0.0.1 that was free a moment ago, for a decision leader to listen on
// (`plugin-check --ranks`, the feedback-delay benchmark, the rank tests).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ncclbot::plugin {

// std::runtime_error when the system gives none.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("no free TCP port on 127.0.0.1: ") + std::strerror(error));
  return ntohs(a.sin_port);
}

}  // namespace ncclbot::plugin
