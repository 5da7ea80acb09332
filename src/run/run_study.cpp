#include "run/run_study.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/progress_bar.hpp"
#include "base/sha256.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/scale/bootstrap_on_device.hpp"
#include "report/claims_over_draws.hpp"
#include "report/figure_script.hpp"
#include "report/report_document.hpp"
#include "report/results_document.hpp"
#include "report/sensitivity.hpp"
#include "study/checkpoint.hpp"
#include "study/policy_replay.hpp"
#include "study/prepared_study.hpp"
#include "study/run_folder.hpp"
#include "study/significance.hpp"
#include "study/study_statistics.hpp"
#include "study/study_variants.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

// Writes only when the bytes differ, so reruns do not touch files that are already right.
void write_if_changed(const std::string& path, const std::string& bytes) {
  const auto old = read_input_file_if_exists(path, kMaxPartialBytes, false);  // a FIFO: refused
  if (!old || *old != bytes) write_file_atomic(path, bytes);
}

// The checkpoint of `unit` if it may be reused; an unusable file is named on stderr (it is then
// recomputed).
std::optional<UnitResult> load_checkpoint(const fs::path& units_dir, const PreparedStudy& study,
                                          const WorkUnit& unit, const std::string& label) {
  std::string why;
  auto u = reusable_checkpoint((units_dir / unit.file_name).string(), study, unit, why);
  if (!why.empty())
    command_err() << label << ": recomputing " << (units_dir / unit.file_name).string() << ": " << why
                  << "\n";
  return u;
}

// Every file the run writes, relative to DIR, except the figures (only the script knows their names).
std::set<std::string> planned_files(const PreparedStudy& study) {
  std::set<std::string> files = {"study.toml", "results.json", "report.md", "report.html"};
  for (const auto& u : study.units) files.insert("units/" + u.file_name);
  for (const auto& ps : study.sweeps) {
    files.insert("sweeps/" + ps.source->name + ".csv");
    if (!ps.side.empty()) files.insert("sweeps/" + ps.source->name + ".sweep.toml");
  }
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

// A file the run reads: the study file (first, line 0), then each [[sweep]] file with its line there.
struct StudyInput {
  std::string path;
  long line = 0;
};

// The path of `input` inside the folder `out` (links resolved), or "" when it lies elsewhere.
std::string path_in_folder(const fs::path& out, const std::string& input) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(out, ec), ec);
  const fs::path rel = fs::weakly_canonical(fs::absolute(input, ec), ec).lexically_relative(root);
  if (ec || rel.empty() || *rel.begin() == ".." || rel == ".") return "";
  return rel.string();
}

// An input of the study may not be one of the files the run manages in `out`: those it replaces
// (a [[sweep]] file in DIR/sweeps/ under a planned name, the study file given as a variant's
// DIR/study.toml) or those an earlier run listed there and this one may remove. One lookup per
// input, so a folder listing many files costs no more.
void check_inputs_survive(const fs::path& out, const std::set<std::string>& managed,
                          const std::vector<StudyInput>& inputs, bool own_study_file) {
  for (const auto& in : inputs) {
    const std::string rel = path_in_folder(out, in.path);
    if (rel.empty() || !managed.count(rel)) continue;
    // study.toml is rewritten with the study's own bytes, so running DIR/study.toml is harmless; a
    // variant's study.toml holds other bytes.
    if (in.line == 0 && own_study_file && rel == "study.toml") continue;
    if (in.line == 0) check_output_not_input((out / rel).string(), {in.path}, "--out");
    throw InputError(inputs.front().path, in.line,
                     "the [[sweep]] file '" + in.path + "' is " + rel + " of --out '" + out.string() +
                         "', a file ncclbot run writes or removes there; move it out of that folder");
  }
}

// The marker of a variant's folder, as the folder above lists it: how a rerun finds the folders of
// variants the study no longer has.
std::string variant_marker(const std::string& slug) {
  return "variants/" + slug + "/" + kRunFolderMarker;
}

bool is_variant_marker(const std::string& listed) {
  const fs::path p(listed);
  auto it = p.begin();
  return std::distance(p.begin(), p.end()) == 3 && *it == "variants" && p.filename() == kRunFolderMarker;
}

// A folder the run writes into must not lead elsewhere through a symbolic link.
void refuse_symlink(const fs::path& p) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(p, ec)))
    throw UsageError("--out: " + p.string() +
                     " is a symbolic link; ncclbot run writes only into real folders");
}

// Empties the folder of a variant the study no longer has: every file its marker lists (nothing
// else), then the marker, then whichever of its folders are left empty.
void remove_variant_folder(const fs::path& dir, const std::vector<StudyInput>& inputs,
                           const FolderOwner& owner, bool replace) {
  refuse_symlink(dir.parent_path());
  refuse_symlink(dir);
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(dir / kRunFolderMarker, ec))) return;
  const RunFolder folder = RunFolder::claim(dir.string(), "--out", owner, replace);
  check_inputs_survive(dir, folder.listed(), inputs, false);
  folder.remove_unlisted({});
  fs::remove(dir / kRunFolderMarker, ec);
  for (const auto* sub : {"units", "sweeps", "figures", ""}) fs::remove(dir / sub, ec);  // only if empty
  fs::remove(dir.parent_path(), ec);
}

// One folder being written: the base study's, or a variant's under DIR/variants/.
struct FolderRun {
  PreparedStudy study;
  RunFolder folder;
  fs::path out;
  std::string label;  // the progress bar's
  RunSummary summary;
};

// Claims the folder, prepares the study and makes the folder a function of it: files of units (and
// sweeps, and variants) the study no longer has go, and so do temporaries of a killed run. Figures
// stay listed unless redrawn.
FolderRun open_folder(StudySpec spec, const fs::path& out, const RunOptions& options,
                      const std::vector<StudyInput>& inputs, bool own_study_file,
                      const std::set<std::string>& variant_markers, std::string label) {
  const FolderOwner owner{"run", spec.name};
  RunFolder folder = RunFolder::claim(out.string(), "--out", owner, options.replace);
  for (const auto* sub : {"units", "sweeps", "figures"}) folder.make_subfolder(sub);
  // Only a terminal gets this early note: in a log, an error in the sweeps then stays the one line.
  if (::isatty(STDERR_FILENO) == 1)
    command_err() << label << ": preparing " << spec.path << " (sweeps, grids)\n";
  FolderRun run{prepare_study(std::move(spec)), folder, out, std::move(label), {}};

  std::set<std::string> planned = planned_files(run.study);
  const std::set<std::string> listed = folder.listed();
  std::set<std::string> managed = listed;
  managed.insert(planned.begin(), planned.end());
  check_inputs_survive(out, managed, inputs, own_study_file);
  planned.insert(variant_markers.begin(), variant_markers.end());
  std::set<std::string> keep = planned;
  for (const auto& f : listed) {
    if (!options.figures && f.rfind("figures/", 0) == 0) keep.insert(f);
    if (is_variant_marker(f) && !planned.count(f))
      remove_variant_folder(out / fs::path(f).parent_path(), inputs, owner, options.replace);
  }
  folder.record(planned);  // first: it refuses a FIFO or a folder where a file goes, before any delete
  folder.remove_unlisted(keep);
  write_if_changed((out / "study.toml").string(), run.study.spec.text);
  for (const auto& ps : run.study.sweeps) {
    write_if_changed((out / "sweeps" / (ps.source->name + ".csv")).string(), ps.csv);
    if (!ps.side.empty())
      write_if_changed((out / "sweeps" / (ps.source->name + ".sweep.toml")).string(), ps.side);
  }
  return run;
}

// Reuses the checkpoints, computes the rest.
void compute_units(FolderRun& run, const EngineOptions& engine) {
  const PreparedStudy& study = run.study;
  const fs::path units_dir = run.out / "units";
  run.summary.units = int(study.units.size());
  double total = 0;
  for (const auto& u : study.units) total += u.cost;
  ProgressBar bar(run.label, total, run.summary.units);
  std::vector<bool> done(study.units.size(), false);
  for (size_t i = 0; i < study.units.size(); ++i) {
    const auto& u = study.units[i];
    if (load_checkpoint(units_dir, study, u, run.label)) {
      done[i] = true;
      bar.skip(u.cost);
      ++run.summary.units_reused;
    }
  }
  if (run.summary.units_reused > 0)
    command_err() << run.label << ": resuming, " << run.summary.units_reused << " of " << run.summary.units
                  << " units already complete in " << units_dir.string() << "\n";
  std::vector<const WorkUnit*> todo;
  for (size_t i = 0; i < study.units.size(); ++i)
    if (!done[i]) todo.push_back(&study.units[i]);
  const auto write = [&](size_t k, UnitResult&& r) {
    write_file_atomic((units_dir / todo[k]->file_name).string(), checkpoint_text(r));
    bar.advance(todo[k]->cost, r.scenario + " / " + r.policy);
  };
  compute_units(study, todo, engine, write);
  bar.finish();
}

// Statistics, results.json (`extend` may add to it first), figures and the report. Everything
// reads the checkpoint files, never the in-memory results, so a resumed run and an uninterrupted
// one build the report from the same bytes.
nlohmann::json finish_folder(FolderRun& run, const RunOptions& options, const std::string& backend,
                             const std::function<void(nlohmann::json&)>& extend) {
  const PreparedStudy& study = run.study;
  const fs::path& out = run.out;
  std::vector<UnitResult> units;
  for (const auto& u : study.units) {
    auto r = load_checkpoint(out / "units", study, u, run.label);
    if (!r) throw std::runtime_error("checkpoint " + u.file_name + " vanished or changed during the run");
    units.push_back(std::move(*r));
  }

  command_err() << run.label << ": statistics (bootstrap intervals, permutation tests, Holm)\n";
  const SignificanceResult sig = test_hypotheses(study, units);
  nlohmann::json results = report::build_results(study, units, sig, backend);
  if (extend) extend(results);
  run.summary.results_json = (out / "results.json").string();
  const std::string results_text = results.dump(1) + "\n";
  write_if_changed(run.summary.results_json, results_text);
  run.folder.record_checksum("results.json", sha256_hex(results_text));  // export-table checks it

  nlohmann::json figures = nlohmann::json::array();
  std::string note = "figures disabled (--no-figures)";
  if (options.figures) {
    command_err() << run.label << ": drawing figures\n";
    const report::FigureOutcome f =
        report::draw_figures(run.summary.results_json, (out / "figures").string());
    figures = plain_figure_entries(f.index);
    if (f.note.empty()) run.folder.record(figure_files(figures));
    note = f.note;
    if (!f.note.empty()) command_err() << run.label << ": warning: " << f.note << "\n";
  }
  const auto blocks = report::build_report(results, figures, note);
  run.summary.report_md = (out / "report.md").string();
  run.summary.report_html = (out / "report.html").string();
  write_if_changed(run.summary.report_md, report::render_markdown(blocks));
  write_if_changed(run.summary.report_html,
                   report::render_html(blocks, out.string(), "ncclbot study: " + study.spec.name));
  return results;
}

// On the cuda backend the report's percentile intervals draw their resamples on the device (the
// same numbers: scale/bootstrap_on_device.hpp), unless another bootstrap is installed already (the
// ranks' split under MPI). Restores the default when the run ends, however it ends.
class DeviceIntervals {
 public:
  explicit DeviceIntervals(const std::string& backend) {
    if (backend != "cuda" || !bootstrap_on_device_built() || interval_bootstrap_installed()) return;
    set_interval_bootstrap(bootstrap_interval_on_device);
    installed_ = true;
  }
  ~DeviceIntervals() {
    if (installed_) set_interval_bootstrap({});
  }
  DeviceIntervals(const DeviceIntervals&) = delete;
  DeviceIntervals& operator=(const DeviceIntervals&) = delete;

 private:
  bool installed_ = false;
};

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
  if (options.threads < 0 || options.threads > 4096) throw UsageError("--threads must be in [0, 4096]");
  const fs::path out = options.out_dir;
  std::vector<StudyInput> inputs = {{spec.path, 0}};
  for (const auto& sw : spec.sweeps)
    if (!sw.file.empty()) inputs.push_back({sw.file, sw.line});
  std::set<std::string> markers;
  for (const auto& v : spec.variants) markers.insert(variant_marker(v.slug));

  FolderRun base = open_folder(std::move(spec), out, options, inputs, true, markers, "ncclbot run");
  const StudySpec& s = base.study.spec;
  // The variants' folders are claimed before any work, so a foreign one stops the run at once.
  for (const auto& v : s.variants) {
    refuse_symlink(out / "variants");
    refuse_symlink(out / "variants" / v.slug);
    RunFolder::claim((out / "variants" / v.slug).string(), "--out", {"run", s.name}, options.replace);
  }
  EngineOptions engine;
  engine.backend = resolve_backend(s.backend);
  engine.threads = options.threads;
  const DeviceIntervals device_intervals(engine.backend);
  compute_units(base, engine);

  // Each variant is a complete run in its own folder, then one entry of the base's "sensitivity".
  nlohmann::json sensitivity = nlohmann::json::array();
  for (size_t i = 0; i < s.variants.size(); ++i) {
    const Variant& v = s.variants[i];
    const fs::path dir = out / "variants" / v.slug;
    refuse_symlink(dir.parent_path());
    refuse_symlink(dir);
    command_err() << "ncclbot run: variant " << i + 1 << " of " << s.variants.size() << ", '" << v.name
                  << "' (" << knobs_text(variant_knobs(v)) << ") -> " << dir.string() << "\n";
    StudySpec vspec = variant_study(s, v, dir.string());
    vspec.backend = s.backend;
    FolderRun run =
        open_folder(std::move(vspec), dir, options, inputs, false, {}, "ncclbot run [" + v.name + "]");
    compute_units(run, engine);
    const nlohmann::json results = finish_folder(run, options, engine.backend, {});
    sensitivity.push_back(report::sensitivity_entry(results, v.name, "variants/" + v.slug, variant_knobs(v)));
    base.summary.variants.push_back({v.name, dir.string(), run.summary});
  }

  std::function<void(nlohmann::json&)> extend;
  if (!s.variants.empty())
    extend = [&](nlohmann::json& results) {
      sensitivity.insert(sensitivity.begin(),
                         report::sensitivity_entry(results, "baseline", ".", baseline_knobs(s)));
      results["sensitivity"] = sensitivity;
      if (s.draws > 1) results["claims_over_draws"] = report::claims_over_draws(sensitivity);
    };
  finish_folder(base, options, engine.backend, extend);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int computed = base.summary.units - base.summary.units_reused, reused = base.summary.units_reused;
  for (const auto& v : base.summary.variants) {
    computed += v.summary.units - v.summary.units_reused;
    reused += v.summary.units_reused;
  }
  command_err() << "ncclbot run: done in " << format_duration(secs) << " (" << computed << " units computed, "
                << reused << " reused"
                << (s.variants.empty() ? ""
                    : s.variants.size() == 1
                        ? ", over the study and its variant"
                        : ", over the study and its " + std::to_string(s.variants.size()) + " variants")
                << ")\n";
  return base.summary;
}

}  // namespace ncclbot::study
