#include "plugin/follower_hub.hpp"

namespace ncclbot::plugin {

std::shared_ptr<FollowerLink> FollowerHub::link(const PluginConfig& cfg, const LeaderKey& key,
                                                std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  // A broken link still serves (and reopens for) the communicators that joined through it; a new
  // communicator gets a fresh connection, so one refused HELLO does not doom the next.
  if (link_ && link_address_ == cfg.leader_address && link_->healthy()) return link_;
  link_ = FollowerLink::connect(cfg.leader_address, key, cfg.leader_timeout_ms, error);
  if (link_) link_address_ = cfg.leader_address;
  return link_;
}

uint32_t FollowerHub::next_ordinal(uint64_t comm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return ordinals_[comm_id]++;
}

}  // namespace ncclbot::plugin
