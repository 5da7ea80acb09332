#pragma once
// The blocking socket steps both ends of the leader link share: whole writes and reads, Nagle off,
// name resolution and the NCCLBOT_LEADER address syntax.
#include <netdb.h>

#include <cstddef>
#include <string>

namespace ncclbot::plugin {

// All `n` bytes, retrying on EINTR; false when the connection fails first.
bool write_full(int fd, const void* buf, size_t n);
bool read_full(int fd, void* buf, size_t n);
void set_nodelay(int fd);
// getaddrinfo for a stream socket (`passive`: to listen on); nullptr + `error` when it fails. The
// caller frees the list with freeaddrinfo.
addrinfo* resolve(const std::string& host, int port, bool passive, std::string* error);
// "host:port" -> parts; false when malformed.
bool split_address(const std::string& address, std::string* host, int* port);

}  // namespace ncclbot::plugin
