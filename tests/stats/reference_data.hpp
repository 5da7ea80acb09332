#pragma once
// Loads the SciPy/statsmodels expected values written by scripts/reference_stats.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ncclbot::test {

inline nlohmann::json reference_cases(const std::string& name) {
  const std::string path = std::string(NCCLBOT_TEST_DATA_DIR) + "/stats/" + name;
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "missing reference file " << path << " (python3 scripts/reference_stats.py)";
  nlohmann::json doc = nlohmann::json::parse(in);
  return doc.at("cases");
}

// JSON null (how the generator writes NaN) back to NaN.
inline double as_double(const nlohmann::json& v) {
  return v.is_null() ? std::nan("") : v.get<double>();
}

inline std::vector<double> as_doubles(const nlohmann::json& v) {
  std::vector<double> out;
  for (const auto& e : v) out.push_back(as_double(e));
  return out;
}

}  // namespace ncclbot::test
