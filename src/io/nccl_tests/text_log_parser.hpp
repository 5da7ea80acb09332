#pragma once
#include <string>
#include <string_view>

#include "ncclbot/io/nccl_tests/log.hpp"

namespace ncclbot::nccl_tests {

// The text output of nccl-tests (any launcher, any layout): splits it into runs.
ParsedLog parse_text_log(std::string_view text, const std::string& file);

// The `-J` JSON output: one run.
ParsedLog parse_json_log(std::string_view text, const std::string& file);

}  // namespace ncclbot::nccl_tests
