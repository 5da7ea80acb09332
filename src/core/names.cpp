#include "ncclbot/core/names.hpp"

#include <cstdio>
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

std::string arm_label(const Arm& arm) {
  std::string s = std::string(algo_name(arm.algo)) + "/" + std::string(proto_name(arm.proto));
  if (!arm.default_knobs())
    s += " channels=" + std::to_string(arm.channels) + " chunk_bytes=" + std::to_string(arm.chunk_bytes);
  return s;
}

std::optional<Arm> parse_arm_label(std::string_view label) {
  const size_t slash = label.find('/'), space = label.find(' ');
  if (slash == std::string_view::npos || (space != std::string_view::npos && space < slash))
    return std::nullopt;
  const std::string_view proto_text =
      label.substr(slash + 1, space == std::string_view::npos ? std::string_view::npos : space - slash - 1);
  const std::optional<Algo> algo = parse_algo(label.substr(0, slash));
  const std::optional<Proto> proto = parse_proto(proto_text);
  if (!algo || !proto) return std::nullopt;
  Arm arm{*algo, *proto, 0, 0};
  if (space == std::string_view::npos) return arm;
  unsigned channels = 0;
  unsigned long long chunk = 0;
  char tail = 0;
  const std::string knobs(label.substr(space));
  if (std::sscanf(knobs.c_str(), " channels=%u chunk_bytes=%llu%c", &channels, &chunk, &tail) != 2 ||
      channels > 0xffffu || chunk > 0xffffffffull)
    return std::nullopt;
  arm.channels = uint16_t(channels);
  arm.chunk_bytes = uint32_t(chunk);
  if (arm.default_knobs() || arm_fault(arm)) return std::nullopt;
  return arm;
}

}  // namespace ncclbot
