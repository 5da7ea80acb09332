#pragma once
// A TCP port on 127.0.0.1 that was free a moment ago, for tests that start a decision leader.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ncclbot::test {

inline int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 20000 + int(getpid() % 20000);
  }
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace ncclbot::test
