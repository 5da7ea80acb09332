#pragma once
// Output documents never carry a number that is not one: nlohmann::json writes NaN and infinity as
// null, so a command checks its document before printing it.
#include <nlohmann/json.hpp>
#include <string>

namespace ncclbot {

// The JSON pointer of the first number in `doc` that is not finite, or of the first null (what a
// NaN becomes when written); "" when every number is finite and nothing is null.
std::string first_non_finite(const nlohmann::json& doc);

}  // namespace ncclbot
