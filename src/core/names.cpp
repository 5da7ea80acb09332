#include "ncclbot/core/names.hpp"

#include <stdexcept>
#include <string>

#include "ncclbot/core/name_table.hpp"

namespace ncclbot {

namespace {

template <typename Enum, size_t N>
std::optional<Enum> parsed(std::string_view s, const std::string_view (&names)[N], int count = int(N)) {
  const int i = find_name(s, names, count);
  return i < 0 ? std::nullopt : std::optional<Enum>(Enum(i));
}

template <size_t N>
std::string_view name_at(const std::string_view (&names)[N], int i) {
  if (i < 0 || i >= int(N)) throw std::out_of_range("no such name index " + std::to_string(i));
  return names[i];
}

}  // namespace

std::string_view algo_name(Algo a) {
  return name_at(kAlgoNames, int(a));
}
std::string_view proto_name(Proto p) {
  return name_at(kProtoNames, int(p));
}
std::string_view collective_name(Collective c) {
  return name_at(kCollectiveNames, int(c));
}

std::optional<Algo> parse_algo(std::string_view s) {
  return parsed<Algo>(s, kAlgoNames);
}
std::optional<Algo> parse_nccl_algo(std::string_view s) {
  return parsed<Algo>(s, kAlgoNames, kNumNcclAlgos);
}
std::optional<Proto> parse_proto(std::string_view s) {
  return parsed<Proto>(s, kProtoNames);
}
std::optional<Collective> parse_collective(std::string_view s) {
  return parsed<Collective>(s, kCollectiveNames);
}

std::string_view algo_names_list() {
  return "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, HiPIPE (simulated, Simple only)";
}
std::string_view nccl_algo_names_list() {
  return "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT";
}
std::string_view proto_names_list() {
  return "LL, LL128, Simple";
}
std::string_view collective_names_list() {
  return "Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, SendRecv, Send, Recv, AlltoAll, Scatter, "
         "Gather";
}

}  // namespace ncclbot
