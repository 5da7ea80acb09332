#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {
namespace {

// Lower-cases and drops '_' / '-' into `out`; false when the name is too long to be valid.
bool normalize(std::string_view s, char (&out)[32], size_t* len) {
  size_t n = 0;
  for (char c : s) {
    if (c == '_' || c == '-') continue;
    if (n + 1 >= sizeof out) return false;
    out[n++] = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  out[n] = '\0';
  *len = n;
  return true;
}

template <size_t N>
int index_of(std::string_view s, const char* const (&names)[N]) {
  char buf[32];
  size_t n = 0;
  if (!normalize(s, buf, &n)) return -1;
  const std::string_view key(buf, n);
  for (size_t i = 0; i < N; ++i)
    if (key == names[i]) return int(i);
  return -1;
}

constexpr const char* kAlgoKeys[] = {"tree",     "ring", "collnetdirect", "collnetchain", "nvls",
                                     "nvlstree", "pat"};
constexpr const char* kProtoKeys[] = {"ll", "ll128", "simple"};
constexpr const char* kCollKeys[] = {"broadcast", "reduce",   "allgather", "reducescatter",
                                     "allreduce", "sendrecv", "send",      "recv",
                                     "alltoall",  "scatter",  "gather"};
constexpr const char* kAlgoLabels[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                       "NVLSTree", "PAT"};
constexpr const char* kProtoLabels[] = {"LL", "LL128", "Simple"};
constexpr const char* kCollLabels[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                       "AllReduce", "SendRecv", "Send",      "Recv",
                                       "AlltoAll",  "Scatter",  "Gather"};

}  // namespace

int parse_algo_name(std::string_view s) {
  return index_of(s, kAlgoKeys);
}
int parse_proto_name(std::string_view s) {
  return index_of(s, kProtoKeys);
}
int parse_collective_name(std::string_view s) {
  return index_of(s, kCollKeys);
}

size_t datatype_size(std::string_view s) {
  char buf[32];
  size_t n = 0;
  if (!normalize(s, buf, &n)) return 0;
  std::string_view k(buf, n);
  if (k.substr(0, 4) == "nccl") k.remove_prefix(4);
  if (k == "int8" || k == "char" || k == "uint8" || k == "float8e4m3" || k == "float8e5m2") return 1;
  if (k == "float16" || k == "half" || k == "bfloat16") return 2;
  if (k == "int32" || k == "int" || k == "uint32" || k == "float32" || k == "float") return 4;
  if (k == "int64" || k == "uint64" || k == "float64" || k == "double") return 8;
  return 0;
}

const char* algo_label(int algo) {
  return (algo >= 0 && algo < 7) ? kAlgoLabels[algo] : "?";
}
const char* proto_label(int proto) {
  return (proto >= 0 && proto < 3) ? kProtoLabels[proto] : "?";
}
const char* collective_label(int coll) {
  return (coll >= 0 && coll < 11) ? kCollLabels[coll] : "?";
}

}  // namespace ncclbot::plugin
