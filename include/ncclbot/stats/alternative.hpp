#pragma once
// Direction of a hypothesis test, spelled as SciPy spells it so a reader can recompute a p-value.
#include <string>
#include <string_view>

namespace ncclbot {

enum class Alternative {
  two_sided,  // the statistic differs from its null value in either direction
  greater,    // the statistic is larger than under the null
  less,       // the statistic is smaller than under the null
};

// "two-sided" | "greater" | "less"; throws UsageError naming `what` otherwise.
Alternative parse_alternative(std::string_view text, std::string_view what = "alternative");
std::string to_string(Alternative a);

}  // namespace ncclbot
