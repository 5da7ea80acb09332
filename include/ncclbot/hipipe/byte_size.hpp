#pragma once
// Message sizes as people write them: "1048576", "64K", "256MiB", "1G" (K/M/G/T are powers of
// 1024, as in nccl-tests' -b/-e options; an optional "B" or "iB" may follow).
#include <cstdint>
#include <optional>
#include <string_view>

namespace ncclbot::hipipe {

std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace ncclbot::hipipe
