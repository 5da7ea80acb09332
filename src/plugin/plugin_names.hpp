#pragma once
// Name parsing for the plugin's inputs (decision tables, profiler descriptors), on the one name
// table and matching rule of the host library (core/name_table.hpp, header-only, so the .so still
// depends on nothing but libc). Case, '_' and '-' are ignored: "all_reduce", "nvls_tree".
#include <cstddef>
#include <string_view>

namespace ncclbot::plugin {

// -1 when unknown. Algorithms and protocols use NCCL's indices; collectives use ncclFunc_t.
int parse_algo_name(std::string_view s);
int parse_proto_name(std::string_view s);
int parse_collective_name(std::string_view s);
// Bytes per element of an NCCL datatype name as the profiler spells it ("ncclFloat32"); 0 if unknown.
size_t datatype_size(std::string_view s);

const char* algo_label(int algo);    // "Tree", ..., "?" when out of range
const char* proto_label(int proto);  // "LL", "LL128", "Simple"
const char* collective_label(int coll);

}  // namespace ncclbot::plugin
