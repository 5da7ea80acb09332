#include "plugin/learner_directory.hpp"

namespace ncclbot::plugin {

void LearnerDirectory::add(uint64_t comm_id, const std::shared_ptr<LatencySink>& learner) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(comm_id, learner);
}

void LearnerDirectory::remove(const std::shared_ptr<LatencySink>& learner) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = live_.begin(); it != live_.end();) {
    auto held = it->second.lock();
    if (!held || held == learner)
      it = live_.erase(it);
    else
      ++it;
  }
}

std::shared_ptr<LatencySink> LearnerDirectory::find(uint64_t comm_id, int nranks, int nnodes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto range = live_.equal_range(comm_id);
  for (auto it = range.first; it != range.second; ++it)
    if (auto l = it->second.lock()) return l;
  std::shared_ptr<LatencySink> newest;
  auto unknown = live_.equal_range(0);
  for (auto it = unknown.first; it != unknown.second; ++it)
    if (auto l = it->second.lock(); l && l->nranks() == nranks && l->nnodes() == nnodes) newest = l;
  return newest;
}

}  // namespace ncclbot::plugin
