// `ncclbot ope`: off-policy evaluation from the plugin's decision logs (docs/ope.md). For each
// target policy, IPS, SNIPS and DR estimates of its mean latency per logged call with bootstrap
// intervals and the effective sample size; with --sweep, the truth from the full forced-arm sweep
// beside them. The library call: cli/ope_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/ope_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace ope_command {

// The command's options: the library call's (cli/ope_call.hpp) and --json.
struct OpeCliOptions {
  OpeCallOptions call;
  bool json = false;
};

// Declares ope's options on `app`, in --help order, bound to `opt`.
void add_ope_options(CLI::App& app, OpeCliOptions& cli) {
  OpeCallOptions& opt = cli.call;
  app.add_option("--log", opt.logs, "decision log(s) written by the plugin (NCCLBOT_LOG, plugin-check --log)")
      ->required();
  app.add_option("--policy", opt.policies,
                 "target: auto, a policy spec evaluated stationary, or table:FILE (repeatable)")
      ->required();
  app.add_option("--sweep", opt.sweep_path,
                 "forced-arm sweep of the logged contexts: print the truth beside");
  app.add_option("--resamples", opt.resamples, "bootstrap resamples (default 999)");
  app.add_option("--seed", opt.seed, "bootstrap seed (default 0)");
  app.add_option("--level", opt.level, "interval level (default 0.95)");
  opt.blocks.add_to(app);
  app.add_flag("--json", cli.json, "print one JSON document on stdout");
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<OpeCliOptions>();
  add_ope_options(app, *opt);
  return [opt] {
    const OpeCallResult r = ope_call(opt->call);
    print_ope(r, opt->json ? command_err() : command_out());
    if (opt->json) command_out() << ope_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"ope", "off-policy evaluation of target policies from the plugin's decision logs (IPS, SNIPS, DR)",
     setup});

}  // namespace ope_command
}  // namespace ncclbot::cli
