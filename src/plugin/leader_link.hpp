#pragma once
// Rank agreement for online mode over TCP (docs/plugin.md "Rank consistency" and "Security
// model"). One process, the leader (rank 0), decides; every other process asks it
// (NCCLBOT_LEADER=host:port) and plays exactly the leader's decision for each call index of each
// (communicator, context). The messages are leader_wire.hpp's, authenticated with the job's secret.
//
//  - The server is one thread serving every connection with epoll: connections, buffered bytes and
//    connections that have not authenticated yet are capped (LeaderLimits); nothing a peer sends
//    runs on, or blocks, the thread of NCCL's getCollInfo.
//  - A follower announces each communicator rank it holds (HELLO) and waits for the leader's ACK:
//    from then on it is counted, so it never falls back on its own (that would split the ranks);
//    it waits for the leader's decisions, reconnecting when the connection breaks, and warns once
//    per timeout period while it waits. A HELLO the leader refused (wrong secret, bad fields) or
//    never received leaves the follower uncounted: it and the leader play NCCL's choice.
//  - Decisions are fetched in windows of kDecisionWindow calls ahead, so a follower rarely waits.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

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

class FollowerLink : public std::enable_shared_from_this<FollowerLink> {
 public:
  // Connects to host:port and reads the leader's greeting, retrying until `timeout_ms`; nullptr +
  // `error` on failure (nothing was said to the leader, so this rank is not counted).
  static std::shared_ptr<FollowerLink> connect(const std::string& address, const LeaderKey& key,
                                               int timeout_ms, std::string* error);

  // Announces one rank and waits for the ACK. false: the leader closed the connection instead
  // (refused) or the link broke before the HELLO went out; this rank is then not counted.
  bool hello(const WireHello& h, int timeout_ms);

  // The leader's decision for call `index` of (comm, key): a slot or -1 (NCCL's choice). Waits as
  // long as it takes (see the header comment); `waiting` is called once per `timeout_ms` waited.
  int decision(uint64_t comm_id, int key, uint64_t index, uint64_t bytes, int nranks, int nnodes,
               const float* prior, int timeout_ms, const std::function<void(int waited_ms)>& waiting);

  // Whether the current connection is up (a broken one is reopened by the next decision).
  bool healthy();

  // Test hook: close the current connection as a network failure would.
  void break_connection_for_test();

  ~FollowerLink();

 private:
  struct Stream {
    std::map<uint64_t, std::vector<int8_t>> windows;  // received, by window number
    // Asked for and not received: when it may be asked again (max() while an answer is due).
    std::map<uint64_t, std::chrono::steady_clock::time_point> requested;
  };
  FollowerLink() = default;
  bool open_locked(std::unique_lock<std::mutex>& lock, int timeout_ms, std::string* error);
  void receive_loop(int fd, uint64_t generation);
  bool send_locked(const std::vector<uint8_t>& bytes);
  void request_locked(Stream& s, uint64_t comm_id, int key, uint64_t window, uint64_t bytes, int nranks,
                      int nnodes, const float* prior);

  std::string address_;
  LeaderKey key_;
  int fd_ = -1;
  uint64_t generation_ = 0;
  bool broken_ = true;
  bool reconnecting_ = false;
  std::unique_ptr<FollowerSession> session_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<WireHello> joined_;                  // re-announced after a reconnect
  std::set<std::pair<uint64_t, uint32_t>> acked_;  // (comm id, ordinal) ACKed on the current connection
  std::map<std::pair<uint64_t, int>, Stream> streams_;
};

// "host:port" -> parts; false when malformed.
bool split_address(const std::string& address, std::string* host, int* port);

}  // namespace ncclbot::plugin
