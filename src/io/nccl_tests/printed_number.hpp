#pragma once
// Tokens of a whitespace-separated table and the numbers in them. nccl-tests pads columns with
// spaces, but wide values overflow their column, so rows are split on whitespace, never by position.
#include <optional>
#include <string_view>
#include <vector>

#include "ncclbot/io/nccl_tests/log.hpp"

namespace ncclbot::nccl_tests {

std::vector<std::string_view> split_whitespace(std::string_view line);

// "34.98", "10329.0", "1.6e+07", "0e+00": the value and half the step of its last printed digit.
// nullopt for anything else, including nan/inf and negative numbers.
std::optional<PrintedNumber> parse_printed_number(std::string_view token);

// A size/count token: a plain non-negative integer.
bool is_all_digits(std::string_view token);

}  // namespace ncclbot::nccl_tests
