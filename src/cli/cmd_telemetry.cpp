// `ncclbot telemetry LOG... --out DIR`: a report of what the plugin did, from its decision logs
// (docs/ope.md): DIR/telemetry.json (every number, with its interval), DIR/report.md,
// DIR/report.html (self-contained) and DIR/figures/ (learning curves; scripts/telemetry_figures.py).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/block_bootstrap_options.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/json_numbers.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/telemetry.hpp"
#include "report/figure_script.hpp"
#include "report/telemetry_report.hpp"
#include "study/run_folder.hpp"

namespace ncclbot::cli {
namespace telemetry_command {

struct TelemetryCliOptions {
  std::vector<std::string> logs;
  std::string out;
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  BlockBootstrapOptions blocks;
  bool figures = true;
  bool replace = false;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<TelemetryCliOptions>();
  app.add_option("logs", opt->logs, "decision log(s) written by the plugin (NCCLBOT_LOG)")->required();
  app.add_option("--out", opt->out, "report folder (created)")->required();
  app.add_option("--resamples", opt->resamples, "bootstrap resamples (default 999)");
  app.add_option("--seed", opt->seed, "bootstrap seed (default 0)");
  app.add_option("--level", opt->level, "interval level (default 0.95)");
  opt->blocks.add_to(app);
  app.add_flag("!--no-figures", opt->figures, "skip the learning-curve figure (no Python needed)");
  app.add_flag("--replace", opt->replace,
               "replace what another command wrote in DIR (or a non-empty folder ncclbot did not write)");
  app.add_flag("--json", opt->json, "print one JSON document with the output paths on stdout");
  return [opt] {
    if (opt->resamples < 1 || opt->resamples > 100000) throw UsageError("--resamples must be in [1, 100000]");
    if (!(opt->level > 0.0 && opt->level < 1.0)) throw UsageError("--level must be in (0, 1)");
    for (const std::string& l : opt->logs) check_output_not_input(opt->out + "/telemetry.json", {l}, "--out");
    const BlockRule rule = opt->blocks.rule();
    const ResampleBackend backend = opt->blocks.resample_backend();
    const LogBlocks data = read_log_blocks(opt->logs, rule);
    const nlohmann::json t = telemetry(
        data, TelemetryOptions{opt->resamples, opt->seed, opt->level, 10, opt->blocks.threads, backend});
    if (const std::string at = first_non_finite(t); !at.empty())
      throw InputError(
          opt->logs.front(), 0,
          "telemetry's " + at + " is not finite (too few calls for an interval); nothing written");
    // The folder is claimed only now, so a bad log leaves nothing behind.
    const study::RunFolder folder =
        study::RunFolder::claim(opt->out, "--out", {"telemetry", ""}, opt->replace);
    folder.record({"telemetry.json", "report.md", "report.html"});
    folder.make_subfolder("figures");
    const std::string json_path = opt->out + "/telemetry.json";
    write_output_file(json_path, t.dump(1) + "\n", "--out");
    nlohmann::json figures = nlohmann::json::array();
    std::string note = "figures disabled (--no-figures)";
    if (opt->figures) {
      const report::FigureOutcome f =
          report::draw_figures_with("telemetry_figures.py", json_path, opt->out + "/figures");
      figures = f.index;
      note = f.note;
    }
    const auto blocks = report::build_telemetry_report(t, opt->logs, figures, note);
    write_output_file(opt->out + "/report.md", report::render_markdown(blocks), "--out");
    write_output_file(opt->out + "/report.html",
                      report::render_html(blocks, opt->out, "ncclbot telemetry: " + data.behaviour), "--out");
    const auto& total = t["total"];
    std::ostream& os = opt->json ? command_err() : command_out();
    os << "telemetry: " << total["calls"] << " calls, saved against NCCL's choice ";
    if (total.contains("saved_us"))
      os << total["saved_us"]["value"] << " us [" << total["saved_us"]["ci"][0] << ", "
         << total["saved_us"]["ci"][1] << "]";
    else
      os << "unknown (NCCL's pick was played in no context)";
    os << ", " << total["contexts_lost"] << " context(s) lost";
    if (const size_t skipped = skipped_latencies(data.files)) os << ", " << skipped_latencies_text(skipped);
    if (const size_t overridden = overridden_calls(data.files))
      os << ", " << overridden_calls_text(overridden, symmetric_calls(data.files));
    os << "\n";
    if (!note.empty() && opt->figures) os << "telemetry: " << note << "\n";
    os << "report: " << opt->out << "/report.html\n";
    if (opt->json)
      command_out() << nlohmann::json{{"telemetry", json_path},
                                      {"report_md", opt->out + "/report.md"},
                                      {"report_html", opt->out + "/report.html"}}
                           .dump()
                    << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"telemetry", "a report of what the plugin did, from its decision logs", setup});

}  // namespace telemetry_command
}  // namespace ncclbot::cli
