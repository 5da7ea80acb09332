#pragma once
// Collectives with NCCL's ncclFunc_t indices (2.28: 11 functions).
#include <cstdint>

namespace ncclbot {

enum class Collective : int8_t {
  kBroadcast = 0,
  kReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kAllReduce = 4,
  kSendRecv = 5,
  kSend = 6,
  kRecv = 7,
  kAllToAll = 8,
  kScatter = 9,
  kGather = 10,
};

inline constexpr int kNumCollectives = 11;

}  // namespace ncclbot
