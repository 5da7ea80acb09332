#pragma once
// `stats TEST` as a library call (cli/replay_call.hpp has the pattern): one test of
// cli/stats_handlers.hpp on its JSON input document, its JSON answer out, no printing. The input's
// fields are each test's (docs/statistics.md); a missing, mistyped or unknown field is an InputError
// naming the input's source and the field.
#include <nlohmann/json.hpp>
#include <string>

#include "cli/json_input.hpp"

namespace ncclbot::cli {

struct StatsCallOptions {
  std::string test;      // holm, bonferroni, permutation, bootstrap, wilcoxon, binomial, mcnemar
  unsigned threads = 1;  // resampling threads (0: all cores); answers do not depend on it
};

// UsageError on an unknown test.
nlohmann::json stats_call(const StatsCallOptions& options, const JsonInput& input);

}  // namespace ncclbot::cli
