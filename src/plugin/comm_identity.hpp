#pragma once
// What every role of one communicator knows about it: its hash, its shape and NCCL's logger.
#include <cstdint>

#include "plugin/plugin_log.hpp"

namespace ncclbot::plugin {

struct CommIdentity {
  uint64_t comm_id = 0;  // 0 for tuner ABI v2..v4, which do not pass it
  bool has_comm_id = false;
  int nranks = 1, nnodes = 1;
  PluginLog log;
};

}  // namespace ncclbot::plugin
