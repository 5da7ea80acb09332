#pragma once
// A kernel channel's start event as NCCL describes it to the profiler (v4 and later): channel
// `channel` of the Coll event `coll`, started at GPU time `start_ns`. What the plugin's benchmarks
// and the tests' stand-in NCCL send.
#include <cstdint>
#include <cstring>

#include "plugin/nccl_abi.hpp"

namespace ncclbot::plugin {

template <typename Descr>
Descr kernel_channel_start(void* coll, int channel, uint64_t start_ns) {
  Descr k;
  std::memset(&k, 0, sizeof k);
  k.type = kNcclProfileKernelCh;
  k.parentObj = coll;
  k.kernelCh.channelId = uint8_t(channel);
  k.kernelCh.pTimer = start_ns;
  return k;
}

}  // namespace ncclbot::plugin
