#pragma once
// The learners of the process's live online communicators, by communicator hash, for the latencies
// the profiler and the report function deliver: those name a communicator, not a tuner context.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "plugin/latency_sink.hpp"

namespace ncclbot::plugin {

class LearnerDirectory {
 public:
  // `comm_id` 0: a tuner ABI (v2..v4) that passes no hash.
  void add(uint64_t comm_id, const std::shared_ptr<LatencySink>& learner);
  // Forgets `learner`, and every learner already freed.
  void remove(const std::shared_ptr<LatencySink>& learner);
  // The learner with hash `comm_id`, else the newest without a hash of the same shape; or nullptr.
  std::shared_ptr<LatencySink> find(uint64_t comm_id, int nranks, int nnodes);

 private:
  std::mutex mu_;
  std::multimap<uint64_t, std::weak_ptr<LatencySink>> live_;  // by comm id (0 = unknown)
};

}  // namespace ncclbot::plugin
