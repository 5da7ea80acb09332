#pragma once
// NCCL's spellings of algorithms, protocols and collectives; parsing is case-insensitive and also
// accepts the nccl-tests / environment-variable forms ("all_reduce", "RING", "nvls_tree").
#include <optional>
#include <string>
#include <string_view>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"

namespace ncclbot {

std::string_view algo_name(Algo a);              // "Tree", "Ring", ..., "PAT", "HiPIPE"
std::string_view proto_name(Proto p);            // "LL", "LL128", "Simple"
std::string_view collective_name(Collective c);  // "AllReduce", ...

std::optional<Algo> parse_algo(std::string_view s);       // any algorithm, HiPIPE included
std::optional<Algo> parse_nccl_algo(std::string_view s);  // NCCL's seven only (logs, NCCL_ALGO)
std::optional<Proto> parse_proto(std::string_view s);
std::optional<Collective> parse_collective(std::string_view s);

// An arm as reports and exported tables write it: "Ring/Simple" at NCCL's own channels and chunk
// size, "Ring/Simple channels=8 chunk_bytes=65536" otherwise (0 = NCCL's value).
std::string arm_label(const Arm& arm);
// The arm a label names, or nullopt.
std::optional<Arm> parse_arm_label(std::string_view label);

// Comma-separated lists of valid spellings, for error messages.
std::string_view algo_names_list();
std::string_view nccl_algo_names_list();
std::string_view proto_names_list();
std::string_view collective_names_list();

}  // namespace ncclbot
