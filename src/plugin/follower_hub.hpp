#pragma once
// The followers' side of the process (every rank but 0 of an online job with several ranks): one
// link to the leader, shared by its communicators, and the ordinal of each rank this process holds
// in a communicator (several GPUs of one process may hold ranks of the same one).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "plugin/follower_link.hpp"
#include "plugin/leader_secret.hpp"
#include "plugin/plugin_config.hpp"

namespace ncclbot::plugin {

class FollowerHub {
 public:
  // The link to cfg's leader: the current one while it is healthy, else a fresh connection; nullptr
  // + `error` when none can be made.
  std::shared_ptr<FollowerLink> link(const PluginConfig& cfg, const LeaderKey& key, std::string* error);
  // 0 for this process's first rank of communicator `comm_id`, then 1, 2, ...
  uint32_t next_ordinal(uint64_t comm_id);

 private:
  std::mutex mu_;
  std::shared_ptr<FollowerLink> link_;
  std::string link_address_;
  std::map<uint64_t, uint32_t> ordinals_;  // ranks of each communicator this process holds
};

}  // namespace ncclbot::plugin
