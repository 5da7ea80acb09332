#pragma once
// NCCL_ALGO and NCCL_PROTO as NCCL reads them: "[LIST][;FUNCTION:LIST]...", LIST = [^]NAME[,NAME]...
// The first list may lack a function and then applies to every function; a later FUNCTION:LIST
// replaces that function's list (NVIDIA/nccl src/tuning/cost_model.cc parseList, also in the 2.28
// library). From 2.31 on, setting NCCL_ALGO disables every algorithm of every function, and a
// function that neither variable names keeps NCCL's own choices (the function is not "forced"):
// so a plain `NCCL_ALGO=Tree` leaves Broadcast, Reduce, AllGather and ReduceScatter no algorithm
// at all, and a campaign names the one function each run times (docs/campaign.md).
#include <optional>
#include <string>
#include <string_view>

#include "ncclbot/core/collective.hpp"

namespace ncclbot::nccl_tests {

// NCCL's name of a tuned function ("Broadcast", "Reduce", "AllGather", "ReduceScatter",
// "AllReduce"); empty for any other collective (NCCL's variables name none of them).
std::string_view nccl_function_name(Collective c);

// The value forcing `name` for collective `c` alone: "AllReduce:Ring" (a function NCCL tunes).
std::string per_function_value(Collective c, std::string_view name);

// The list `value` gives collective `c`'s function ("Ring", "^LL", "Ring,Tree"), or nullopt when
// the value names other functions only. A value NCCL refuses at init (a list without a function
// after the first entry, an unknown function, an empty list) throws std::invalid_argument saying
// why; so does a collective NCCL's variables cannot name when the value names functions.
std::optional<std::string> list_for_collective(std::string_view value, Collective c);

}  // namespace ncclbot::nccl_tests
