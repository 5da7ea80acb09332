#pragma once
// The one table of algorithm, protocol and collective names (NCCL's spellings, in NCCL's index
// order) and the one rule for matching a name read from a user or from NCCL: case, '_' and '-' are
// ignored, so "AllReduce", "all_reduce" and "ALLREDUCE" match, as do "NVLSTree" and "nvls_tree".
// Header-only and allocation-free: the host library (core/names.hpp) and the plugin, which links
// nothing of the host library, both read it.
#include <string_view>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"

namespace ncclbot {

inline constexpr std::string_view kAlgoNames[kNumAlgos] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT", "HiPIPE"};
inline constexpr std::string_view kProtoNames[kNumProtos] = {"LL", "LL128", "Simple"};
inline constexpr std::string_view kCollectiveNames[kNumCollectives] = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv",
    "Send",      "Recv",   "AlltoAll",  "Scatter",       "Gather"};

// Whether `s` spells `name` under the matching rule. A string of only '_' and '-' spells nothing.
constexpr bool name_matches(std::string_view s, std::string_view name) {
  const auto skip = [](std::string_view t, size_t i) {
    while (i < t.size() && (t[i] == '_' || t[i] == '-')) ++i;
    return i;
  };
  const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
  bool any = false;
  for (size_t i = skip(s, 0), j = skip(name, 0);; i = skip(s, i + 1), j = skip(name, j + 1)) {
    if (i == s.size() || j == name.size()) return any && i == s.size() && j == name.size();
    if (lower(s[i]) != lower(name[j])) return false;
    any = true;
  }
}

// The index of the first of the first `count` names that `s` spells, or -1.
template <size_t N>
constexpr int find_name(std::string_view s, const std::string_view (&names)[N], int count = int(N)) {
  for (int i = 0; i < count && i < int(N); ++i)
    if (name_matches(s, names[i])) return i;
  return -1;
}

// NCCL's index of a name read from a user or from NCCL, or -1: one of its seven algorithms (HiPIPE
// is never a live arm), a protocol, a collective (ncclFunc_t).
constexpr int nccl_algo_index(std::string_view s) {
  return find_name(s, kAlgoNames, kNumNcclAlgos);
}
constexpr int proto_index(std::string_view s) {
  return find_name(s, kProtoNames);
}
constexpr int collective_index(std::string_view s) {
  return find_name(s, kCollectiveNames);
}

}  // namespace ncclbot
