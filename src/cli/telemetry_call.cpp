#include "cli/telemetry_call.hpp"

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/json_numbers.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/telemetry.hpp"
#include "report/figure_script.hpp"
#include "report/telemetry_report.hpp"
#include "study/run_folder.hpp"

namespace ncclbot::cli {

TelemetryCallResult telemetry_call(const TelemetryCallOptions& o) {
  if (o.resamples < 1 || o.resamples > 100000) throw UsageError("--resamples must be in [1, 100000]");
  if (!(o.level > 0.0 && o.level < 1.0)) throw UsageError("--level must be in (0, 1)");
  for (const std::string& l : o.logs) check_output_not_input(o.out + "/telemetry.json", {l}, "--out");
  const BlockRule rule = o.blocks.rule();
  const ResampleBackend backend = o.blocks.resample_backend();
  const LogBlocks data = read_log_blocks(o.logs, rule);
  TelemetryCallResult r;
  r.telemetry =
      telemetry(data, TelemetryOptions{o.resamples, o.seed, o.level, 10, o.blocks.threads, backend});
  if (const std::string at = first_non_finite(r.telemetry); !at.empty())
    throw InputError(o.logs.front(), 0,
                     "telemetry's " + at + " is not finite (too few calls for an interval); nothing written");
  // The folder is claimed only now, so a bad log leaves nothing behind.
  const study::RunFolder folder = study::RunFolder::claim(o.out, "--out", {"telemetry", ""}, o.replace);
  folder.record({"telemetry.json", "report.md", "report.html"});
  folder.make_subfolder("figures");
  r.telemetry_json = o.out + "/telemetry.json";
  r.report_md = o.out + "/report.md";
  r.report_html = o.out + "/report.html";
  write_output_file(r.telemetry_json, r.telemetry.dump(1) + "\n", "--out");
  nlohmann::json figures = nlohmann::json::array();
  r.figures_note = "figures disabled (--no-figures)";
  if (o.figures) {
    const report::FigureOutcome f =
        report::draw_figures_with("telemetry_figures.py", r.telemetry_json, o.out + "/figures");
    figures = f.index;
    r.figures_note = f.note;
  }
  const auto blocks = report::build_telemetry_report(r.telemetry, o.logs, figures, r.figures_note);
  write_output_file(r.report_md, report::render_markdown(blocks), "--out");
  write_output_file(r.report_html, report::render_html(blocks, o.out, "ncclbot telemetry: " + data.behaviour),
                    "--out");
  r.behaviour = data.behaviour;
  r.skipped_latencies = skipped_latencies(data.files);
  r.overridden_calls = overridden_calls(data.files);
  r.symmetric_calls = symmetric_calls(data.files);
  return r;
}

nlohmann::json telemetry_document(const TelemetryCallResult& r) {
  return {{"telemetry", r.telemetry_json}, {"report_md", r.report_md}, {"report_html", r.report_html}};
}

}  // namespace ncclbot::cli
