#pragma once
// The stand-in NCCL's machine and cost model, shared by the stand-in (standin_nccl.cpp) and the tests
// that check what ncclbot-sweep wrote against it. Ids are the stand-in's registry rows: NCCL 2.32's
// general kernels (NVIDIA/nccl src/config/algorithm_registry.cc), with the collectives each serves.
#include <cstddef>
#include <string>

namespace ncclbot::sweep_standin {

enum StandinFunc { kBroadcast = 0, kReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllReduce = 4 };

struct StandinId {
  const char* name;
  const char* label;  // ncclbot's spelling, as in the sweep CSV
  int algo, proto;
  unsigned funcs;  // bit f: serves ncclFunc_t f
  bool on_this_machine;
};

inline constexpr unsigned kAll = 0x1f,
                          kArAgRs = (1u << kAllReduce) | (1u << kAllGather) | (1u << kReduceScatter);
inline constexpr StandinId kStandinTable[] = {
    {"TREE_LL", "Tree/LL", 0, 0, 1u << kAllReduce, true},
    {"TREE_LL128", "Tree/LL128", 0, 1, 1u << kAllReduce, true},
    {"TREE_SIMPLE", "Tree/Simple", 0, 2, 1u << kAllReduce, true},
    {"RING_LL", "Ring/LL", 1, 0, kAll, true},
    {"RING_LL128", "Ring/LL128", 1, 1, kAll, true},
    {"RING_SIMPLE", "Ring/Simple", 1, 2, kAll, true},
    {"COLLNET_DIRECT_SIMPLE", "CollNetDirect/Simple", 2, 2, kArAgRs, false},
    {"COLLNET_CHAIN_SIMPLE", "CollNetChain/Simple", 3, 2, 1u << kAllReduce, false},
    {"NVLS_SIMPLE", "NVLS/Simple", 4, 2, kArAgRs, false},
    {"NVLSTREE_SIMPLE", "NVLSTree/Simple", 5, 2, 1u << kAllReduce, false},
    {"PAT_SIMPLE", "PAT/Simple", 6, 2, (1u << kAllGather) | (1u << kReduceScatter), true},
};
inline constexpr int kStandinIds = int(sizeof(kStandinTable) / sizeof(kStandinTable[0]));
inline constexpr int kStandinDefaultChannels = 8;  // the channels of a call that sets none
inline constexpr int kStandinMaxChannels = 32;     // a communicator's most

inline const StandinId& standin_id(int id) {
  return kStandinTable[id];
}
inline std::string arm_label(int id) {
  return kStandinTable[id].label;
}

// us of one call on `rank`: every term a small dyadic number, so the times are exact in float.
// LL128 beats LL from 8 KiB, so a selection that names both runs LL128.
inline double model_us(int id, int channels, size_t bytes, int rank) {
  const StandinId& k = kStandinTable[id];
  return 2.0 + 3.0 * k.algo + 2.0 * k.proto + 16.0 / channels + double(bytes) / (1024.0 * (1 + k.proto)) +
         0.5 * rank;
}

// The ids this machine can run for collective `func`.
inline unsigned long long runnable_ids(int func) {
  unsigned long long mask = 0;
  for (int id = 0; id < kStandinIds; ++id)
    if (kStandinTable[id].on_this_machine && (kStandinTable[id].funcs >> func & 1u)) mask |= 1ull << id;
  return mask;
}

// The cheapest id of `mask` (the lowest on a tie), or -1 for none.
inline int cheapest(unsigned long long mask, int channels, size_t bytes, int rank) {
  int best = -1;
  for (int id = 0; id < kStandinIds; ++id)
    if ((mask >> id & 1ull) &&
        (best < 0 || model_us(id, channels, bytes, rank) < model_us(best, channels, bytes, rank)))
      best = id;
  return best;
}

}  // namespace ncclbot::sweep_standin
