#pragma once
// The ncclCollConfig_t.algSelection string that names exactly one of NCCL's general (algorithm,
// protocol) kernels. NCCL 2.31+ matches a tag against its registry's names as a case-insensitive
// prefix (NVIDIA/nccl src/config/algorithm_registry.cc, ncclAlgTagMask), so "RING_LL" alone also
// selects RING_LL128 and NCCL would pick within the pair; the names another name starts with are
// therefore excluded with "+^" ('+' is AND, '^' is NOT: NVIDIA/nccl src/config/algorithm_parser.cc;
// both files at commit 889806836097808572f87a2019eefd01f27aae68).
#include <optional>
#include <string>

#include "ncclbot/core/arm.hpp"

namespace ncclbot::sweep_tool {

// The registry's name of (algo, proto), or nullopt where NCCL has no such kernel (NVLS/LL, ...).
std::optional<std::string> registry_name(Algo algo, Proto proto);
// The selection string for the arm's algorithm and protocol, or nullopt where NCCL has no kernel.
std::optional<std::string> alg_selection(const Arm& arm);

}  // namespace ncclbot::sweep_tool
