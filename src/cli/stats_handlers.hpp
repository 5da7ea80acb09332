#pragma once
// One handler per `ncclbot stats` test: reads the fields of its JSON input, calls the library and
// returns the JSON answer. Kept apart from the CLI11 wiring so the table is the single list of tests.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/json_input.hpp"

namespace ncclbot::cli {

struct StatsRunOptions {
  unsigned threads = 1;
};

using StatsHandler = std::function<nlohmann::json(const JsonInput&, const StatsRunOptions&)>;

struct StatsTest {
  std::string name;
  std::string help;
  std::string input_help;
  StatsHandler run;
};

const std::vector<StatsTest>& stats_tests();

}  // namespace ncclbot::cli
