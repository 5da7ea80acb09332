#include "study/run_study.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "report/figure_script.hpp"
#include "report/report_document.hpp"
#include "report/results_document.hpp"
#include "study/atomic_file.hpp"
#include "study/policy_replay.hpp"
#include "study/prepared_study.hpp"
#include "study/progress_bar.hpp"
#include "study/run_folder.hpp"
#include "study/significance.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

// Writes only when the bytes differ, so reruns do not touch files that are already right.
void write_if_changed(const std::string& path, const std::string& bytes) {
  const auto old = read_file_if_exists(path);
  if (!old || *old != bytes) write_file_atomic(path, bytes);
}

// A checkpoint is reused only if it parses, names the same unit and was computed from the same
// inputs; anything else (a torn file cannot exist, but a stale or foreign one can) is recomputed.
std::optional<UnitResult> load_checkpoint(const std::string& path, const PreparedStudy& study,
                                          const WorkUnit& unit) {
  const auto text = read_file_if_exists(path);
  if (!text) return std::nullopt;
  try {
    UnitResult u = unit_from_json(nlohmann::json::parse(*text));
    const auto& sc = study.scenarios[size_t(unit.scenario)];
    if (u.inputs_sha256 != unit.inputs_sha256 || u.scenario != sc.spec->name ||
        u.policy != study.policies[size_t(unit.policy)].spec->name || u.online.size() != sc.score.size())
      return std::nullopt;
    return u;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string unit_bytes(const UnitResult& u) {
  return to_json(u).dump(1) + "\n";
}

// Every file the run writes, relative to DIR, except the figures (only the script knows their names).
std::set<std::string> planned_files(const PreparedStudy& study) {
  std::set<std::string> files = {"study.toml", "results.json", "report.md", "report.html"};
  for (const auto& u : study.units) files.insert("units/" + u.file_name);
  for (const auto& ps : study.sweeps) files.insert("sweeps/" + ps.source->name + ".csv");
  return files;
}

// The figure script's index, keeping only entries that name a plain file in figures/ with a text
// caption: the report embeds those files, so a name like "../../x" must never reach it.
nlohmann::json plain_figure_entries(const nlohmann::json& index) {
  nlohmann::json kept = nlohmann::json::array();
  if (!index.is_array()) return kept;
  for (const auto& f : index) {
    if (!f.is_object() || !f.contains("file") || !f["file"].is_string() || !f.contains("caption") ||
        !f["caption"].is_string())
      continue;
    const std::string name = f["file"].get<std::string>();
    if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..")
      kept.push_back(f);
  }
  return kept;
}

// The files of a drawing, as run-folder entries.
std::set<std::string> figure_files(const nlohmann::json& entries) {
  std::set<std::string> files = {"figures/index.json"};
  for (const auto& f : entries) files.insert("figures/" + f["file"].get<std::string>());
  return files;
}

// An input of the study may not be one of the files the run replaces (e.g. a [[sweep]] file that
// lives in DIR/sweeps/ under a planned name, or the study file given as DIR/study.toml).
void check_inputs_survive(const fs::path& out, const std::set<std::string>& planned, const StudySpec& s) {
  std::vector<std::string> inputs = {s.path};
  for (const auto& sw : s.sweeps)
    if (!sw.file.empty()) inputs.push_back(sw.file);
  for (const auto& f : planned) {
    // study.toml is rewritten with the study's own bytes, so running DIR/study.toml is harmless.
    if (f == "study.toml") continue;
    check_output_not_input((out / f).string(), inputs, "--out");
  }
}

}  // namespace

RunSummary run_study(const std::string& study_path, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  StudySpec spec = load_study(study_path);
  if (!options.backend.empty()) {
    if (options.backend != "cpu" && options.backend != "cuda" && options.backend != "auto")
      throw UsageError("--backend must be cpu, cuda or auto");
    spec.backend = options.backend;
  }
  if (options.out_dir.empty()) throw UsageError("--out DIR is required");
  const RunFolder folder = RunFolder::claim(options.out_dir, "--out");
  const fs::path out = options.out_dir;
  std::error_code ec;
  for (const auto* sub : {"units", "sweeps", "figures"}) {
    fs::create_directories(out / sub, ec);
    if (ec) throw UsageError("--out: cannot create " + (out / sub).string() + ": " + ec.message());
  }

  // Only a terminal gets this early note: in a log, an error in the sweeps then stays the one line.
  if (::isatty(STDERR_FILENO) == 1)
    std::cerr << "ncclbot run: preparing " << study_path << " (sweeps, grids)\n";
  const PreparedStudy study = prepare_study(std::move(spec));
  const StudySpec& s = study.spec;
  EngineOptions engine;
  engine.backend = resolve_backend(s.backend);
  engine.threads = options.threads;

  // The folder becomes a function of the study alone: files of units (and sweeps) the study no
  // longer has go, and so do temporaries of a killed run. Figures stay listed unless redrawn.
  const std::set<std::string> planned = planned_files(study);
  check_inputs_survive(out, planned, s);
  std::set<std::string> keep = planned;
  if (!options.figures)
    for (const auto& f : folder.listed())
      if (f.rfind("figures/", 0) == 0) keep.insert(f);
  folder.remove_unlisted(keep);
  folder.record(planned);
  write_if_changed((out / "study.toml").string(), s.text);
  for (const auto& ps : study.sweeps)
    write_if_changed((out / "sweeps" / (ps.source->name + ".csv")).string(), ps.csv);

  // Units: reuse the checkpoints, compute the rest.
  RunSummary summary;
  summary.units = int(study.units.size());
  double total = 0;
  for (const auto& u : study.units) total += u.cost;
  ProgressBar bar("ncclbot run", total, summary.units);
  std::vector<bool> done(study.units.size(), false);
  for (size_t i = 0; i < study.units.size(); ++i) {
    const auto& u = study.units[i];
    if (load_checkpoint((out / "units" / u.file_name).string(), study, u)) {
      done[i] = true;
      bar.skip(u.cost);
      ++summary.units_reused;
    }
  }
  if (summary.units_reused > 0)
    std::cerr << "ncclbot run: resuming, " << summary.units_reused << " of " << summary.units
              << " units already complete in " << (out / "units").string() << "\n";
  for (size_t i = 0; i < study.units.size(); ++i) {
    if (done[i]) continue;
    const auto& u = study.units[i];
    const UnitResult r = compute_unit(study, u, engine);
    write_file_atomic((out / "units" / u.file_name).string(), unit_bytes(r));
    bar.advance(u.cost, r.scenario + " / " + r.policy);
  }
  bar.finish();

  // Everything downstream reads the checkpoint files, never the in-memory results, so a resumed
  // run and an uninterrupted one build the report from the same bytes.
  std::vector<UnitResult> units;
  for (const auto& u : study.units) {
    auto r = load_checkpoint((out / "units" / u.file_name).string(), study, u);
    if (!r) throw std::runtime_error("checkpoint " + u.file_name + " vanished or changed during the run");
    units.push_back(std::move(*r));
  }

  std::cerr << "ncclbot run: statistics (bootstrap intervals, permutation tests, Holm)\n";
  const SignificanceResult sig = test_hypotheses(study, units);
  const nlohmann::json results = report::build_results(study, units, sig, engine.backend);
  summary.results_json = (out / "results.json").string();
  write_if_changed(summary.results_json, results.dump(1) + "\n");

  nlohmann::json figures = nlohmann::json::array();
  std::string note = "figures disabled (--no-figures)";
  if (options.figures) {
    std::cerr << "ncclbot run: drawing figures\n";
    const report::FigureOutcome f = report::draw_figures(summary.results_json, (out / "figures").string());
    figures = plain_figure_entries(f.index);
    if (f.note.empty()) folder.record(figure_files(figures));
    note = f.note;
    if (!f.note.empty()) std::cerr << "ncclbot run: warning: " << f.note << "\n";
  }
  const auto blocks = report::build_report(results, figures, note);
  summary.report_md = (out / "report.md").string();
  summary.report_html = (out / "report.html").string();
  write_if_changed(summary.report_md, report::render_markdown(blocks));
  write_if_changed(summary.report_html,
                   report::render_html(blocks, out.string(), "ncclbot study: " + s.name));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "ncclbot run: done in " << format_duration(secs) << " ("
            << summary.units - summary.units_reused << " units computed, " << summary.units_reused
            << " reused)\n";
  return summary;
}

}  // namespace ncclbot::study
