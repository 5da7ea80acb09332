#include "ncclbot/core/names.hpp"

#include <array>
#include <cctype>
#include <string>

namespace ncclbot {
namespace {

constexpr std::array<std::string_view, kNumAlgos> kAlgoNames = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT", "HiPIPE"};
constexpr std::array<std::string_view, kNumProtos> kProtoNames = {"LL", "LL128", "Simple"};
constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv",
    "Send",      "Recv",   "AlltoAll",  "Scatter",       "Gather"};

// Lower-case with '_' and '-' removed, so "all_reduce", "AllReduce" and "NVLS_TREE" all match.
std::string fold(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch == '_' || ch == '-') continue;
    out.push_back(char(std::tolower(static_cast<unsigned char>(ch))));
  }
  return out;
}

template <size_t N>
std::optional<int> find_folded(const std::array<std::string_view, N>& names, std::string_view s) {
  const std::string key = fold(s);
  if (key.empty()) return std::nullopt;
  for (size_t i = 0; i < N; ++i)
    if (fold(names[i]) == key) return int(i);
  return std::nullopt;
}

}  // namespace

std::string_view algo_name(Algo a) { return kAlgoNames.at(size_t(a)); }
std::string_view proto_name(Proto p) { return kProtoNames.at(size_t(p)); }
std::string_view collective_name(Collective c) { return kCollectiveNames.at(size_t(c)); }

std::optional<Algo> parse_algo(std::string_view s) {
  if (auto i = find_folded(kAlgoNames, s)) return Algo(*i);
  return std::nullopt;
}
std::optional<Algo> parse_nccl_algo(std::string_view s) {
  const auto a = parse_algo(s);
  if (a && int(*a) < kNumNcclAlgos) return a;
  return std::nullopt;
}
std::optional<Proto> parse_proto(std::string_view s) {
  if (auto i = find_folded(kProtoNames, s)) return Proto(*i);
  return std::nullopt;
}
std::optional<Collective> parse_collective(std::string_view s) {
  if (auto i = find_folded(kCollectiveNames, s)) return Collective(*i);
  return std::nullopt;
}

std::string_view algo_names_list() {
  return "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, HiPIPE (simulated, Simple only)";
}
std::string_view nccl_algo_names_list() { return "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"; }
std::string_view proto_names_list() { return "LL, LL128, Simple"; }
std::string_view collective_names_list() {
  return "Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, SendRecv, Send, Recv, AlltoAll, Scatter, "
         "Gather";
}

}  // namespace ncclbot
