#include "plugin/plugin_names.hpp"

#include "ncclbot/core/name_table.hpp"

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

}  // namespace

int parse_algo_name(std::string_view s) {
  return nccl_algo_index(s);
}
int parse_proto_name(std::string_view s) {
  return proto_index(s);
}
int parse_collective_name(std::string_view s) {
  return collective_index(s);
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

// The table's names are string literals, so their data are NUL-terminated C strings.
const char* algo_label(int algo) {
  return (algo >= 0 && algo < kNumNcclAlgos) ? kAlgoNames[algo].data() : "?";
}
const char* proto_label(int proto) {
  return (proto >= 0 && proto < kNumProtos) ? kProtoNames[proto].data() : "?";
}
const char* collective_label(int coll) {
  return (coll >= 0 && coll < kNumCollectives) ? kCollectiveNames[coll].data() : "?";
}

}  // namespace ncclbot::plugin
