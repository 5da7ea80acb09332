#include "ncclbot/io/json_numbers.hpp"

#include <cmath>

namespace ncclbot {
namespace {

void find_non_finite(const nlohmann::json& j, const std::string& at, std::string& found) {
  if (!found.empty()) return;
  if (j.is_null() || (j.is_number_float() && !std::isfinite(j.get<double>()))) {
    found = at.empty() ? "/" : at;
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) find_non_finite(it.value(), at + "/" + it.key(), found);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) find_non_finite(j[i], at + "/" + std::to_string(i), found);
  }
}

}  // namespace

std::string first_non_finite(const nlohmann::json& doc) {
  std::string found;
  find_non_finite(doc, "", found);
  return found;
}

}  // namespace ncclbot
