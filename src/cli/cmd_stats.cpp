// `ncclbot stats TEST`: every statistic a report prints, as JSON in (stdin or --input FILE) and JSON
// out, so a reader can recompute any number by hand (the library call: cli/stats_call.hpp). Field
// names are listed in docs/statistics.md.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/command.hpp"
#include "cli/json_input.hpp"
#include "cli/stats_call.hpp"
#include "cli/stats_handlers.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace stats_command {

struct StatsOptions {
  std::string input;
  unsigned threads = 1;
  bool json = true;
};

Action setup(CLI::App& app) {
  app.require_subcommand(1);
  auto opt = std::make_shared<StatsOptions>();
  std::vector<CLI::App*> tests;
  for (const StatsTest& test : stats_tests()) {
    CLI::App* sub = app.add_subcommand(test.name, test.help);
    sub->add_option("--input,-i", opt->input, "JSON input file (default: standard input)");
    sub->add_option("--threads", opt->threads,
                    "worker threads for resampling (0 = all cores); results do not depend on it");
    sub->add_flag("--json", opt->json,
                  "accepted for symmetry with other commands: the output is always JSON");
    sub->footer("Input: " + test.input_help);
    tests.push_back(sub);
  }
  return [opt, tests] {
    for (CLI::App* sub : tests) {
      if (!sub->parsed()) continue;
      const JsonInput in = JsonInput::read(opt->input);
      command_out() << stats_call(StatsCallOptions{sub->get_name(), opt->threads}, in).dump(2) << "\n";
      return 0;
    }
    return 2;
  };
}

const bool registered = register_command(
    {"stats",
     "statistics as JSON in, JSON out: holm, bonferroni, permutation, bootstrap, wilcoxon, binomial, mcnemar",
     setup});

}  // namespace stats_command
}  // namespace ncclbot::cli
