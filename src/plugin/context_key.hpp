#pragma once
// The plugin's notion of a context within one communicator: (collective, size class). The size
// class is the bit length of nBytes (0 for 0 bytes; 2^k..2^(k+1)-1 share class k+1), so every
// power-of-two size of an nccl-tests sweep gets its own context, and sizes NCCL merges or pads
// land next to their neighbours. Unknown collectives (index >= 11) have no key: pass-through.
#include <cstddef>
#include <cstdint>

namespace ncclbot::plugin {

inline constexpr int kNumKnownCollectives = 11;  // NCCL 2.28 ncclFunc_t
inline constexpr int kNumSizeClasses = 65;
inline constexpr int kNumContextKeys = kNumKnownCollectives * kNumSizeClasses;

inline int size_class(uint64_t bytes) {
  return bytes == 0 ? 0 : 64 - __builtin_clzll(bytes);
}

// -1 when the collective is outside NCCL's known functions.
inline int context_key(int collective, uint64_t bytes) {
  if (collective < 0 || collective >= kNumKnownCollectives) return -1;
  return collective * kNumSizeClasses + size_class(bytes);
}

inline int key_collective(int key) {
  return key / kNumSizeClasses;
}
inline int key_size_class(int key) {
  return key % kNumSizeClasses;
}

}  // namespace ncclbot::plugin
