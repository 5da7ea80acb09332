#pragma once
// Rank agreement for online mode (docs/plugin.md "Rank consistency"). One process, the leader
// (rank 0), decides; every other process asks it over TCP (NCCLBOT_LEADER=host:port) and plays
// exactly the leader's decision for each call index of each (communicator, context).
//
//  - A follower announces each communicator it joins (HELLO). The leader plays NCCL's own choice
//    for a communicator until all of its ranks are present (its own plus the HELLOs), so a rank
//    that never reached the leader cannot make the others diverge: they all play NCCL's choice.
//  - Decisions are fetched in windows of kDecisionWindow calls ahead, so a follower rarely waits.
//  - A follower that waits longer than NCCLBOT_LEADER_TIMEOUT_MS gives up on the leader for good,
//    plays NCCL's choice from then on and logs a warning (the only path to disagreement left:
//    a leader that vanishes mid-job).
// Both ends run the same plugin build, so messages are fixed-layout structs in host byte order.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"

namespace ncclbot::plugin {

inline constexpr int kDecisionWindow = 256;
inline constexpr uint32_t kWireMagic = 0x4e43424cu;  // "LBCN"

struct WireHello {
  uint32_t magic, kind;  // kind 1
  uint64_t comm_id;
  uint32_t nranks, nnodes;
};

struct WireRequest {
  uint32_t magic, kind;  // kind 2
  uint64_t comm_id;
  uint64_t start;
  uint64_t bytes;  // nBytes of the call that asked (seeds a context the leader has not seen yet)
  uint32_t key, count;
  uint32_t nranks, nnodes;
  float prior[kNumNcclArms];  // NCCL's cost table of the asking call
  uint32_t pad;
};

struct WireDecisions {
  uint32_t magic, kind;  // kind 3, followed by `count` int8 decisions
  uint64_t comm_id;
  uint64_t start;
  uint32_t key, count;
};

// What the leader's server needs from the plugin: register a follower's rank of a communicator,
// and decide a window of calls.
struct LeaderHandler {
  std::function<void(uint64_t comm_id, int nranks, int nnodes)> hello;
  std::function<void(const WireRequest& request, int8_t* out)> decide;
};

class LeaderServer {
 public:
  // Binds host:port and serves in background threads; false + `error` when it cannot listen.
  static bool start(const std::string& address, LeaderHandler handler, std::string* error);
};

class FollowerLink {
 public:
  // Connects to host:port, retrying until `timeout_ms`; nullptr + `error` on failure.
  static std::shared_ptr<FollowerLink> connect(const std::string& address, int timeout_ms,
                                               std::string* error);

  void hello(uint64_t comm_id, int nranks, int nnodes);
  // The leader's decision for call `index` of (comm, key): a slot or -1 (NCCL's choice). Returns
  // false when the leader did not answer within the timeout or the link is down.
  bool decision(uint64_t comm_id, int key, uint64_t index, uint64_t bytes, int nranks, int nnodes,
                const float* prior, int timeout_ms, int* slot);
  bool healthy() const;

  ~FollowerLink();

 private:
  // Decisions arrive in aligned windows: window w covers calls [w * kDecisionWindow, (w + 1) * ...).
  struct Stream {
    std::map<uint64_t, std::vector<int8_t>> windows;  // received
    std::map<uint64_t, bool> requested;               // asked for, not yet received
  };
  FollowerLink() = default;
  void receive_loop();
  bool send_request(uint64_t comm_id, int key, uint64_t window, uint64_t bytes, int nranks, int nnodes,
                    const float* prior);

  int fd_ = -1;
  mutable std::mutex mu_;
  std::mutex send_mu_;
  std::condition_variable cv_;
  bool broken_ = false;
  std::map<std::pair<uint64_t, int>, Stream> streams_;
};

// "host:port" -> parts; false when malformed.
bool split_address(const std::string& address, std::string* host, int* port);

}  // namespace ncclbot::plugin
