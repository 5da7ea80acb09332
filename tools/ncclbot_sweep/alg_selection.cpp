#include "alg_selection.hpp"

#include <string_view>

namespace ncclbot::sweep_tool {

namespace {

// NCCL 2.32's general kernels by arm slot (algo * 3 + proto); empty where the combination does not
// exist (NVIDIA/nccl src/config/algorithm_registry.cc at 889806836097808572f87a2019eefd01f27aae68, the
// commented rows).
constexpr std::string_view kRegistryNames[kNumNcclArms] = {
    "TREE_LL", "TREE_LL128", "TREE_SIMPLE",            // Tree
    "RING_LL", "RING_LL128", "RING_SIMPLE",            // Ring
    "",        "",           "COLLNET_DIRECT_SIMPLE",  // CollNetDirect
    "",        "",           "COLLNET_CHAIN_SIMPLE",   // CollNetChain
    "",        "",           "NVLS_SIMPLE",            // NVLS
    "",        "",           "NVLSTREE_SIMPLE",        // NVLSTree
    "",        "",           "PAT_SIMPLE",             // PAT
};

}  // namespace

std::optional<std::string> registry_name(Algo algo, Proto proto) {
  const int slot = arm_slot(algo, proto);
  if (!is_nccl_slot(slot) || kRegistryNames[slot].empty()) return std::nullopt;
  return std::string(kRegistryNames[slot]);
}

std::optional<std::string> alg_selection(const Arm& arm) {
  const auto name = registry_name(arm.algo, arm.proto);
  if (!name) return std::nullopt;
  std::string selection = *name;
  // Every other general name that starts with this one (case does not matter: all are upper case).
  // The symmetric kernels' names start with "SYMK_", which no general name is a prefix of.
  for (std::string_view other : kRegistryNames)
    if (other.size() > name->size() && other.substr(0, name->size()) == *name)
      selection += "+^" + std::string(other);
  return selection;
}

}  // namespace ncclbot::sweep_tool
