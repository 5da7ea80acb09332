// `ncclbot telemetry LOG... --out DIR`: a report of what the plugin did, from its decision logs
// (docs/ope.md): DIR/telemetry.json (every number, with its interval), DIR/report.md,
// DIR/report.html (self-contained) and DIR/figures/ (learning curves; scripts/telemetry_figures.py).
// The library call: cli/telemetry_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/telemetry_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/log/decision_log.hpp"

namespace ncclbot::cli {
namespace telemetry_command {

// The command's options: the library call's (cli/telemetry_call.hpp) and --json.
struct TelemetryCliOptions {
  TelemetryCallOptions call;
  bool json = false;
};

// What the command says of a finished report.
void print_telemetry(const TelemetryCallResult& r, bool figures, std::ostream& os) {
  const auto& total = r.telemetry["total"];
  os << "telemetry: " << total["calls"] << " calls, saved against NCCL's choice ";
  if (total.contains("saved_us"))
    os << total["saved_us"]["value"] << " us [" << total["saved_us"]["ci"][0] << ", "
       << total["saved_us"]["ci"][1] << "]";
  else
    os << "unknown (NCCL's pick was played in no context)";
  os << ", " << total["contexts_lost"] << " context(s) lost";
  if (r.skipped_latencies) os << ", " << skipped_latencies_text(r.skipped_latencies);
  if (r.overridden_calls) os << ", " << overridden_calls_text(r.overridden_calls, r.symmetric_calls);
  os << "\n";
  if (!r.figures_note.empty() && figures) os << "telemetry: " << r.figures_note << "\n";
  os << "report: " << r.report_html << "\n";
}

Action setup(CLI::App& app) {
  auto cli = std::make_shared<TelemetryCliOptions>();
  TelemetryCallOptions* opt = &cli->call;
  app.add_option("logs", opt->logs, "decision log(s) written by the plugin (NCCLBOT_LOG)")->required();
  app.add_option("--out", opt->out, "report folder (created)")->required();
  app.add_option("--resamples", opt->resamples, "bootstrap resamples (default 999)");
  app.add_option("--seed", opt->seed, "bootstrap seed (default 0)");
  app.add_option("--level", opt->level, "interval level (default 0.95)");
  opt->blocks.add_to(app);
  app.add_flag("!--no-figures", opt->figures, "skip the learning-curve figure (no Python needed)");
  app.add_flag("--replace", opt->replace,
               "replace what another command wrote in DIR (or a non-empty folder ncclbot did not write)");
  app.add_flag("--json", cli->json, "print one JSON document with the output paths on stdout");
  return [cli] {
    const TelemetryCallResult r = telemetry_call(cli->call);
    print_telemetry(r, cli->call.figures, cli->json ? command_err() : command_out());
    if (cli->json) command_out() << telemetry_document(r).dump() << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"telemetry", "a report of what the plugin did, from its decision logs", setup});

}  // namespace telemetry_command
}  // namespace ncclbot::cli
