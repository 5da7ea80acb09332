#pragma once
// Table mode's file: the decision table (table/decision_table.hpp, the one codec) read from a small
// regular file, as the plugin and `ncclbot ope` read NCCLBOT_TABLE.
#include <cstddef>
#include <string>

#include "table/decision_table.hpp"

namespace ncclbot::plugin {

using table::CallKey;
using table::deciding_row;
using table::DecisionRow;
using table::DecisionTable;
using table::kAny;

inline constexpr size_t kMaxTableFileBytes = size_t(16) << 20;  // far above any real table

// Reads `path`, a regular file of at most kMaxTableFileBytes (a device or FIFO is refused at once),
// into `table` (rows of other fabrics than a non-empty `fabric` dropped); false with "PATH: reason" or
// "PATH:LINE: reason" in `error`.
bool load_decision_table(const std::string& path, const std::string& fabric, DecisionTable* table,
                         std::string* error);

}  // namespace ncclbot::plugin
