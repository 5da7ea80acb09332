#pragma once
// Rank agreement for online mode over TCP, the leader's end (docs/plugin.md "Rank consistency" and
// "Security model"). One process, the leader (rank 0), decides; every other process asks it
// (NCCLBOT_LEADER=host:port, follower_link.hpp) and plays exactly the leader's decision for each
// call index of each (communicator, context). The messages are leader_wire.hpp's, authenticated
// with the job's secret.
//
// The server is one thread serving every connection with epoll: connections, buffered bytes and
// connections that have not authenticated yet are capped (LeaderLimits); nothing a peer sends runs
// on, or blocks, the thread of NCCL's getCollInfo.
#include <cstddef>
#include <string>

#include "plugin/leader_wire.hpp"

namespace ncclbot::plugin {

struct LeaderLimits {
  size_t max_connections = 4096;       // all connections at once; more are closed at accept
  size_t max_unauthenticated = 64;     // not yet past one valid tag; the oldest is evicted
  int handshake_ms = 5000;             // an unauthenticated connection is closed after this
  size_t max_output_bytes = 1u << 20;  // a peer that does not read its answers is closed
};

class LeaderServer {
 public:
  // Binds host:port and serves in one background thread; false + `error` when it cannot listen.
  static bool start(const std::string& address, const LeaderKey& key, const LeaderHandler& handler,
                    const LeaderLimits& limits, std::string* error);
};

}  // namespace ncclbot::plugin
