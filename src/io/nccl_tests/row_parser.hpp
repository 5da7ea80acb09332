#pragma once
// One data row of the results table, read with the layout of its column header.
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "io/nccl_tests/column_layout.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"

namespace ncclbot::nccl_tests {

// The row, or the reason it is not a valid row of this layout. Times are returned in µs.
std::variant<Row, std::string> parse_row(const std::vector<std::string_view>& tokens,
                                         const ColumnLayout& layout, long line);

}  // namespace ncclbot::nccl_tests
