// ncclbot._core, the compiled half of the Python package: the library calls under the commands of the
// `ncclbot` program (cli/*_call.hpp: typed options in, the document their --json prints out, their
// one-line errors and exit codes), any command line run in process (cli/dispatch.hpp), and the sweep
// CSV in its canonical form. The GIL is released
// while a command runs, and no lock is held: two Python threads run two commands at once; progress
// goes to a Python callable instead of a terminal line.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/progress_line.hpp"
#include "cli/dispatch.hpp"
#include "cli/export_table_call.hpp"
#include "cli/hipipe_call.hpp"
#include "cli/ingest_call.hpp"
#include "cli/inspect_call.hpp"
#include "cli/json_input.hpp"
#include "cli/merge_call.hpp"
#include "cli/model_call.hpp"
#include "cli/ope_call.hpp"
#include "cli/plan_call.hpp"
#include "cli/replay_call.hpp"
#include "cli/run_call.hpp"
#include "cli/stats_call.hpp"
#include "cli/synth_call.hpp"
#include "cli/telemetry_call.hpp"
#include "cli/tune_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/io/sweep_side_data.hpp"
#include "ncclbot/version.hpp"

namespace nb = nanobind;

namespace {

// (exit code, stdout, stderr) of one command.
using Outcome = std::tuple<int, std::string, std::string>;

// A captured command writes into strings of its own: the calling thread's command streams
// (core/command_streams.hpp) point at them for its duration, and the threads of its work inherit
// them, so calls from several Python threads run at once, each with its own output.
Outcome run_command(const std::vector<std::string>& args, const std::optional<std::string>& input,
                    bool capture) {
  nb::gil_scoped_release released;
  std::ostringstream out, err;
  std::istringstream in(input.value_or(""));
  const ncclbot::CommandStreams streams(capture ? &out : nullptr, capture ? &err : nullptr,
                                        input ? &in : nullptr);
  const int code = ncclbot::cli::run_cli(args);
  ncclbot::command_out().flush();
  return {code, out.str(), err.str()};
}

// A JSON document as Python objects: None, bool, int, float, str, list and dict. The GIL must be held.
nb::object python_of(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return nb::none();
    case nlohmann::json::value_t::boolean:
      return nb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return nb::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return nb::int_(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return nb::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return nb::str(j.get_ref<const std::string&>().data(), j.get_ref<const std::string&>().size());
    case nlohmann::json::value_t::array: {
      nb::list out;
      for (const auto& v : j) out.append(python_of(v));
      return out;
    }
    case nlohmann::json::value_t::object: {
      nb::dict out;
      for (const auto& [k, v] : j.items()) out[nb::str(k.data(), k.size())] = python_of(v);
      return out;
    }
    default:
      throw std::runtime_error("a JSON value of no Python type");
  }
}

// A library call's outcome: (exit code, its document as Python objects or None, standard error:
// warnings, or the one-line error).
using CallOutcome = std::tuple<int, nb::object, std::string>;

// Runs `document()` (a typed call and the document of its result) with the GIL released and its
// standard error captured, the way a command's failure is reported.
template <typename F>
CallOutcome call_outcome(F&& document) {
  std::ostringstream err;
  std::optional<nlohmann::json> doc;
  int code = 0;
  {
    nb::gil_scoped_release released;
    const ncclbot::CommandStreams streams(nullptr, &err);
    try {
      doc = document();
    } catch (...) {
      code = ncclbot::cli::report_failure(std::current_exception(), err);
    }
  }
  return {code, doc ? python_of(*doc) : nb::none(), err.str()};
}

std::string comma_joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

// What replay's and tune's calls share, from their Python arguments (None: the CLI's default).
void set_run_options(ncclbot::cli::ReplayRunOptions& o, const std::string& sweep,
                     const std::vector<std::string>& policies, int seeds, int horizon,
                     std::optional<uint64_t> seed, ncclbot::cli::FeedbackOptions feedback,
                     std::optional<int> threads, std::optional<std::string> backend) {
  o.sweep_path = sweep;
  o.policies = policies;
  o.seeds = seeds;
  o.horizon = horizon;
  o.seed = seed.value_or(0);
  o.feedback = std::move(feedback);
  o.threads = threads.value_or(0);
  o.backend = backend.value_or("cpu");
}

// `replay` as a library call (cli/replay_call.hpp): typed options, the document `replay --json` prints,
// no command line.
CallOutcome replay(const std::string& sweep, const std::vector<std::string>& policies, int seeds, int horizon,
                   std::optional<uint64_t> seed, std::optional<int> delay, std::optional<int> window,
                   std::optional<int> policy_start, std::optional<std::string> as_deployed,
                   std::optional<std::string> nccl_version, std::optional<std::string> observation_cost,
                   std::optional<int> threads, std::optional<std::string> backend,
                   std::optional<std::vector<std::string>> nodes,
                   std::optional<std::vector<std::string>> collectives, std::optional<std::string> raw) {
  ncclbot::cli::ReplayCallOptions o;
  set_run_options(o, sweep, policies, seeds, horizon, seed,
                  {delay, window, policy_start, as_deployed.value_or(""), nccl_version.value_or(""),
                   observation_cost.value_or("")},
                  threads, backend);
  o.nodes = nodes ? comma_joined(*nodes) : "";
  o.collectives = collectives ? comma_joined(*collectives) : "";
  o.raw_path = raw.value_or("");
  return call_outcome([&] {
    const ncclbot::cli::ReplayCallResult r = ncclbot::cli::replay_call(o);
    return ncclbot::cli::replay_document(r.report, r.results);
  });
}

// `model` as a library call (cli/model_call.hpp): the document `model --json` prints.
CallOutcome model(uint64_t bytes, std::optional<std::string> fabric, std::optional<std::string> collective,
                  std::optional<int> nodes, std::optional<int> gpus_per_node) {
  ncclbot::cli::ModelCallOptions o;
  o.bytes = bytes;
  if (fabric) o.fabric = *fabric;
  if (collective) o.collective = *collective;
  if (nodes) o.nodes = *nodes;
  o.gpus_per_node = gpus_per_node;
  return call_outcome([&] { return ncclbot::cli::model_document(ncclbot::cli::model_call(o)); });
}

// `tune` as a library call (cli/tune_call.hpp): the document `tune --json` prints.
CallOutcome tune(const std::string& sweep, const std::vector<std::string>& policies, int seeds, int horizon,
                 std::optional<std::vector<std::string>> tune_nodes,
                 std::optional<std::vector<std::string>> score_nodes,
                 std::optional<std::vector<std::string>> collectives, std::optional<std::string> objective,
                 std::optional<uint64_t> seed, std::optional<int> delay, std::optional<int> window,
                 std::optional<int> policy_start, std::optional<std::string> as_deployed,
                 std::optional<std::string> nccl_version, std::optional<std::string> observation_cost,
                 std::optional<int> threads, std::optional<std::string> backend) {
  ncclbot::cli::TuneCallOptions o;
  set_run_options(o, sweep, policies, seeds, horizon, seed,
                  {delay, window, policy_start, as_deployed.value_or(""), nccl_version.value_or(""),
                   observation_cost.value_or("")},
                  threads, backend);
  if (tune_nodes) o.tune_nodes = comma_joined(*tune_nodes);
  if (score_nodes) o.score_nodes = comma_joined(*score_nodes);
  if (collectives) o.collectives = comma_joined(*collectives);
  if (objective) o.objective = *objective;
  return call_outcome([&] {
    const ncclbot::cli::TuneCallResult r = ncclbot::cli::tune_call(o);
    return ncclbot::cli::tune_document(r.report, r.tuned);
  });
}

// `inspect` as a library call (cli/inspect_call.hpp): the document `inspect --json` prints.
CallOutcome inspect(const std::string& sweep, std::optional<std::vector<std::string>> nodes,
                    std::optional<std::vector<std::string>> collectives) {
  ncclbot::cli::InspectCallOptions o;
  o.sweep_path = sweep;
  if (nodes) o.nodes = comma_joined(*nodes);
  if (collectives) o.collectives = comma_joined(*collectives);
  return call_outcome([&] { return ncclbot::cli::inspect_document(ncclbot::cli::inspect_call(o)); });
}

// `stats TEST` as a library call (cli/stats_call.hpp) on its input document, JSON text named
// "<input>" in errors: the answer `stats TEST` prints.
CallOutcome stats(const std::string& test, const std::string& input, unsigned threads) {
  return call_outcome([&] {
    std::istringstream in(input);
    const auto doc = ncclbot::cli::JsonInput::parse(
        ncclbot::read_input_stream(in, "<input>", ncclbot::kMaxJsonInputBytes), "<input>");
    return ncclbot::cli::stats_call(ncclbot::cli::StatsCallOptions{test, threads}, doc);
  });
}

// A sweep as the package's Sweep holds it: its canonical CSV (floats in their shortest exact form)
// and its side-file text (empty without side data).
std::pair<std::string, std::string> sweep_texts(const ncclbot::Sweep& sweep) {
  std::ostringstream csv;
  ncclbot::write_sweep_csv(sweep, csv);
  return {csv.str(), ncclbot::sweep_side_data_text(sweep.dynamics())};
}

// `synth` as a library call (cli/synth_call.hpp): the document `synth --json` prints, with the sweep's
// canonical CSV ("csv") and side-file text ("side", empty without side data); written to `out` when
// one is named.
CallOutcome synth(const std::string& fabric, uint64_t seed, std::optional<std::string> out,
                  std::optional<std::vector<std::string>> nodes,
                  std::optional<std::vector<std::string>> collectives, std::optional<int> samples,
                  std::optional<uint64_t> min_bytes, std::optional<uint64_t> max_bytes,
                  std::optional<int> gpus_per_node, bool hipipe, std::optional<std::string> observation,
                  std::optional<double> noise_scale, std::optional<std::string> drift,
                  std::optional<std::string> first_use, std::optional<std::string> warmup,
                  std::optional<double> shift_rate, std::optional<double> shift_size,
                  std::optional<double> shift_arm_size, std::optional<std::string> knobs) {
  ncclbot::cli::SynthCallOptions o;
  o.fabric = fabric;
  o.seed = seed;
  o.out = out.value_or("");
  if (nodes) o.nodes = comma_joined(*nodes);
  if (collectives) o.collectives = comma_joined(*collectives);
  if (samples) o.samples = *samples;
  if (min_bytes) o.min_bytes = *min_bytes;
  if (max_bytes) o.max_bytes = *max_bytes;
  o.gpus_per_node = gpus_per_node;
  o.hipipe = hipipe;
  if (observation) o.observation = *observation;
  if (noise_scale) o.noise_scale = *noise_scale;
  if (drift) o.drift = *drift;
  if (first_use) o.first_use = *first_use;
  if (warmup) o.warmup = *warmup;
  o.shift_rate = shift_rate;
  o.shift_size = shift_size;
  o.shift_arm_size = shift_arm_size;
  o.knobs = knobs;
  return call_outcome([&] {
    const ncclbot::cli::SynthCallResult r = ncclbot::cli::synth_call(o);
    nlohmann::json doc = ncclbot::cli::synth_document(r);
    const auto [csv, side] = sweep_texts(r.sweep);
    doc["csv"] = csv;
    doc["side"] = side;
    return doc;
  });
}

// `run` as a library call (run/run_study.hpp): the document `run --json` prints.
CallOutcome run_study(const std::string& study, const std::string& out, std::optional<std::string> backend,
                      std::optional<int> threads, bool figures, bool replace) {
  ncclbot::study::RunOptions o;
  o.out_dir = out;
  o.backend = backend.value_or("");
  o.threads = threads.value_or(0);
  o.figures = figures;
  o.replace = replace;
  return call_outcome([&] { return ncclbot::cli::run_document(ncclbot::study::run_study(study, o)); });
}

// The block-bootstrap settings `ope` and `telemetry` share, from their Python arguments (None: the
// CLI's default).
template <typename Options>
void set_bootstrap_options(Options& o, std::optional<int> resamples, std::optional<uint64_t> seed,
                           std::optional<double> level, const std::optional<std::string>& block_length,
                           std::optional<unsigned> threads, const std::optional<std::string>& backend) {
  if (resamples) o.resamples = *resamples;
  if (seed) o.seed = *seed;
  if (level) o.level = *level;
  if (block_length) o.blocks.block_length = *block_length;
  if (threads) o.blocks.threads = *threads;
  if (backend) o.blocks.backend = *backend;
}

// `ope` as a library call (cli/ope_call.hpp): the document `ope --json` prints.
CallOutcome ope(const std::vector<std::string>& logs, const std::vector<std::string>& policies,
                std::optional<std::string> sweep, std::optional<int> resamples, std::optional<uint64_t> seed,
                std::optional<double> level, std::optional<std::string> block_length,
                std::optional<unsigned> threads, std::optional<std::string> backend) {
  ncclbot::cli::OpeCallOptions o;
  o.logs = logs;
  o.policies = policies;
  o.sweep_path = sweep.value_or("");
  set_bootstrap_options(o, resamples, seed, level, block_length, threads, backend);
  return call_outcome([&] { return ncclbot::cli::ope_document(ncclbot::cli::ope_call(o)); });
}

// `export-table` as a library call (cli/export_table_call.hpp): the document `export-table --json`
// prints.
CallOutcome export_table(const std::string& study, const std::string& policy, const std::string& out,
                         std::optional<std::string> format, std::optional<std::vector<std::string>> scenarios,
                         std::optional<std::string> fabric) {
  ncclbot::cli::ExportTableCallOptions o;
  o.study_dir = study;
  o.selection.policy = policy;
  o.out = out;
  if (format) o.format = *format;
  if (scenarios) o.selection.scenarios = *scenarios;
  if (fabric) o.selection.fabric = *fabric;
  return call_outcome(
      [&] { return ncclbot::cli::export_table_document(ncclbot::cli::export_table_call(o)); });
}

// `ingest` as a library call (cli/ingest_call.hpp): the document `ingest --json` prints.
CallOutcome ingest(const std::vector<std::string>& logs, std::optional<std::string> out,
                   std::optional<std::string> manifest, std::optional<std::string> placement,
                   std::optional<std::string> fabric, std::optional<std::string> samples, bool skip_unforced,
                   bool skip_failed, bool allow_missing) {
  ncclbot::cli::IngestCallOptions o;
  o.logs = logs;
  o.out = out.value_or("");
  o.manifest = manifest.value_or("");
  if (placement) o.placement = *placement;
  if (fabric) o.fabric = *fabric;
  if (samples) o.samples = *samples;
  o.skip_unforced = skip_unforced;
  o.skip_failed = skip_failed;
  o.allow_missing = allow_missing;
  return call_outcome([&] { return ncclbot::cli::ingest_document(ncclbot::cli::ingest_call(o)); });
}

// `merge` as a library call (cli/merge_call.hpp): the document `merge --json` prints.
CallOutcome merge(const std::vector<std::string>& partials, std::optional<std::string> out) {
  return call_outcome([&] {
    return ncclbot::cli::merge_document(ncclbot::cli::merge_call({partials, out.value_or("")}));
  });
}

// `plan` as a library call (cli/plan_call.hpp): the document `plan --json` prints; the campaign is
// written to `out`. Lists as the command line's comma-separated words.
CallOutcome plan(const std::string& fabric, const std::vector<std::string>& nodes, const std::string& out,
                 std::optional<std::vector<std::string>> collectives, std::optional<std::string> min_bytes,
                 std::optional<std::string> max_bytes, std::optional<std::vector<std::string>> arms,
                 std::optional<std::vector<std::string>> channels,
                 std::optional<std::vector<std::string>> chunk_bytes, std::optional<std::string> launcher,
                 std::optional<std::string> nccl_version, std::optional<int> gpus_per_node,
                 std::optional<int> iters, std::optional<int> warmup, std::optional<uint64_t> step_factor,
                 std::optional<double> startup_s) {
  ncclbot::cli::PlanCallOptions o;
  o.fabric = fabric;
  o.nodes = comma_joined(nodes);
  o.out = out;
  if (collectives) o.collectives = comma_joined(*collectives);
  if (min_bytes) o.min_bytes = *min_bytes;
  if (max_bytes) o.max_bytes = *max_bytes;
  if (arms) o.arms = comma_joined(*arms);
  if (channels) o.channels = comma_joined(*channels);
  if (chunk_bytes) o.chunk_bytes = comma_joined(*chunk_bytes);
  if (launcher) o.launcher = *launcher;
  if (nccl_version) o.nccl_version = *nccl_version;
  o.gpus_per_node = gpus_per_node;
  if (iters) o.iters = *iters;
  if (warmup) o.warmup = *warmup;
  if (step_factor) o.step_factor = *step_factor;
  if (startup_s) o.startup_s = *startup_s;
  return call_outcome([&] { return ncclbot::cli::plan_document(ncclbot::cli::plan_call(o)); });
}

// `plan --status DIR` as a library call: the document it prints with --json.
CallOutcome plan_status(const std::string& dir) {
  return call_outcome(
      [&] { return ncclbot::cli::plan_status_document(ncclbot::cli::plan_status_call(dir)); });
}

// `telemetry` as a library call (cli/telemetry_call.hpp): the paths `telemetry --json` prints, and
// telemetry.json's content under "telemetry_document".
CallOutcome telemetry(const std::vector<std::string>& logs, const std::string& out,
                      std::optional<int> resamples, std::optional<uint64_t> seed, std::optional<double> level,
                      std::optional<std::string> block_length, std::optional<unsigned> threads,
                      std::optional<std::string> backend, bool figures, bool replace) {
  ncclbot::cli::TelemetryCallOptions o;
  o.logs = logs;
  o.out = out;
  set_bootstrap_options(o, resamples, seed, level, block_length, threads, backend);
  o.figures = figures;
  o.replace = replace;
  return call_outcome([&] {
    const ncclbot::cli::TelemetryCallResult r = ncclbot::cli::telemetry_call(o);
    nlohmann::json doc = ncclbot::cli::telemetry_document(r);
    doc["telemetry_document"] = r.telemetry;
    return doc;
  });
}

// `hipipe` as a library call (cli/hipipe_call.hpp): the document `hipipe --json` prints.
CallOutcome hipipe(const std::string& fabric, const std::string& bytes, std::optional<int> nodes,
                   std::optional<int> gpus_per_node, std::optional<int> chunks,
                   std::optional<int> max_chunks) {
  ncclbot::cli::HipipeCallOptions o;
  o.fabric = fabric;
  o.bytes = bytes;
  o.nodes = nodes;
  o.gpus_per_node = gpus_per_node;
  if (chunks) o.chunks = *chunks;
  if (max_chunks) o.max_chunks = *max_chunks;
  return call_outcome([&] { return ncclbot::cli::hipipe_document(ncclbot::cli::hipipe_call(o)); });
}

// A sweep read strictly (from a file, or from CSV text such as a DataFrame's) and written back in
// canonical form (sweep_texts), so reading it again is bit-identical.
// (exit code, CSV, side-file text, error): the side text is empty without side data.
using SweepOutcome = std::tuple<int, std::string, std::string, std::string>;

SweepOutcome canonical_sweep(const std::string& source, const std::optional<std::string>& text) {
  // A file name is read up to its first NUL: "keep\0.csv" would open "keep".
  if (!text && source.find('\0') != std::string::npos) {
    return {2, "", "", "ncclbot: a sweep path holds a NUL byte\n"};
  }
  nb::gil_scoped_release released;
  std::ostringstream err;
  std::pair<std::string, std::string> texts;
  try {
    std::optional<ncclbot::Sweep> sweep;
    if (text) {
      std::istringstream in(*text);
      sweep.emplace(ncclbot::parse_sweep_csv(in, source));
    } else {
      sweep.emplace(ncclbot::read_sweep_csv(source));
    }
    texts = sweep_texts(*sweep);
  } catch (...) {
    const int code = ncclbot::cli::report_failure(std::current_exception(), err);
    return {code, "", "", err.str()};
  }
  return {0, texts.first, texts.second, ""};
}

// The Python callable progress goes to, or null. Held with a reference of its own and never freed
// at exit (the interpreter may be gone by then); replaced only with the GIL held.
PyObject* progress_callable = nullptr;

void set_progress(nb::object callable) {
  PyObject* next = callable.is_none() ? nullptr : callable.inc_ref().ptr();
  PyObject* previous = progress_callable;
  progress_callable = next;
  Py_XDECREF(previous);
  if (next == nullptr) {
    ncclbot::set_progress_observer({});
    return;
  }
  ncclbot::set_progress_observer([](const std::string& label, size_t done, size_t total, bool last) {
    nb::gil_scoped_acquire held;
    if (progress_callable == nullptr) return;
    const nb::handle callable(progress_callable);
    try {
      callable(label, done, total, last);
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("ncclbot progress callback");
    }
  });
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ncclbot's compiled core: the CLI's commands in process, and sweep CSV canonicalization";
  m.attr("version") = std::string(ncclbot::kVersion);
  m.def("run_command", &run_command, nb::arg("args"), nb::arg("input") = nb::none(),
        nb::arg("capture") = true,
        "Runs one ncclbot command line (without the program name). Returns (exit code, stdout, stderr); "
        "with capture=False the output goes to the process's own stdout and stderr.");
  m.def("replay", &replay, nb::arg("sweep"), nb::arg("policies"), nb::arg("seeds"), nb::arg("horizon"),
        nb::arg("seed") = nb::none(), nb::arg("delay") = nb::none(), nb::arg("window") = nb::none(),
        nb::arg("policy_start") = nb::none(), nb::arg("as_deployed") = nb::none(),
        nb::arg("nccl_version") = nb::none(), nb::arg("observation_cost") = nb::none(),
        nb::arg("threads") = nb::none(), nb::arg("backend") = nb::none(), nb::arg("nodes") = nb::none(),
        nb::arg("collectives") = nb::none(), nb::arg("raw") = nb::none(),
        "`replay` as a library call, without the command line: (exit code, the document `replay --json` "
        "prints as Python objects or None, standard error: warnings or the one-line error). None: the "
        "CLI's default; nodes and collectives as lists of their words; raw: the --raw CSV to write.");
  m.def("tune", &tune, nb::arg("sweep"), nb::arg("policies"), nb::arg("seeds"), nb::arg("horizon"),
        nb::arg("tune_nodes") = nb::none(), nb::arg("score_nodes") = nb::none(),
        nb::arg("collectives") = nb::none(), nb::arg("objective") = nb::none(), nb::arg("seed") = nb::none(),
        nb::arg("delay") = nb::none(), nb::arg("window") = nb::none(), nb::arg("policy_start") = nb::none(),
        nb::arg("as_deployed") = nb::none(), nb::arg("nccl_version") = nb::none(),
        nb::arg("observation_cost") = nb::none(), nb::arg("threads") = nb::none(),
        nb::arg("backend") = nb::none(),
        "`tune` as a library call: (exit code, the document `tune --json` prints or None, standard error).");
  m.def("inspect", &inspect, nb::arg("sweep"), nb::arg("nodes") = nb::none(),
        nb::arg("collectives") = nb::none(),
        "`inspect` as a library call: (exit code, the document `inspect --json` prints or None, standard "
        "error).");
  m.def("stats", &stats, nb::arg("test"), nb::arg("input"), nb::arg("threads") = 1,
        "`stats TEST` as a library call on its JSON input text: (exit code, the answer or None, standard "
        "error).");
  m.def("synth", &synth, nb::arg("fabric"), nb::arg("seed"), nb::arg("out") = nb::none(),
        nb::arg("nodes") = nb::none(), nb::arg("collectives") = nb::none(), nb::arg("samples") = nb::none(),
        nb::arg("min_bytes") = nb::none(), nb::arg("max_bytes") = nb::none(),
        nb::arg("gpus_per_node") = nb::none(), nb::arg("hipipe") = false, nb::arg("observation") = nb::none(),
        nb::arg("noise_scale") = nb::none(), nb::arg("drift") = nb::none(), nb::arg("first_use") = nb::none(),
        nb::arg("warmup") = nb::none(), nb::arg("shift_rate") = nb::none(),
        nb::arg("shift_size") = nb::none(), nb::arg("shift_arm_size") = nb::none(),
        nb::arg("knobs") = nb::none(),
        "`synth` as a library call: (exit code, the document `synth --json` prints with the sweep's "
        "canonical 'csv' and 'side' text, or None, standard error); written to out when given.");
  m.def("run_study", &run_study, nb::arg("study"), nb::arg("out"), nb::arg("backend") = nb::none(),
        nb::arg("threads") = nb::none(), nb::arg("figures") = true, nb::arg("replace") = false,
        "`run STUDY --out OUT` as a library call: (exit code, the document `run --json` prints or None, "
        "standard error).");
  m.def("model", &model, nb::arg("bytes"), nb::arg("fabric") = nb::none(), nb::arg("collective") = nb::none(),
        nb::arg("nodes") = nb::none(), nb::arg("gpus_per_node") = nb::none(),
        "`model` as a library call: (exit code, the document `model --json` prints as Python objects or "
        "None, standard error). None: the CLI's default.");
  m.def("ope", &ope, nb::arg("logs"), nb::arg("policies"), nb::arg("sweep") = nb::none(),
        nb::arg("resamples") = nb::none(), nb::arg("seed") = nb::none(), nb::arg("level") = nb::none(),
        nb::arg("block_length") = nb::none(), nb::arg("threads") = nb::none(),
        nb::arg("backend") = nb::none(),
        "`ope` as a library call: (exit code, the document `ope --json` prints or None, standard error).");
  m.def("export_table", &export_table, nb::arg("study"), nb::arg("policy"), nb::arg("out"),
        nb::arg("format") = nb::none(), nb::arg("scenarios") = nb::none(), nb::arg("fabric") = nb::none(),
        "`export-table` as a library call: (exit code, the document `export-table --json` prints or None, "
        "standard error).");
  m.def("ingest", &ingest, nb::arg("logs"), nb::arg("out") = nb::none(), nb::arg("manifest") = nb::none(),
        nb::arg("placement") = nb::none(), nb::arg("fabric") = nb::none(), nb::arg("samples") = nb::none(),
        nb::arg("skip_unforced") = false, nb::arg("skip_failed") = false, nb::arg("allow_missing") = false,
        "`ingest` as a library call: (exit code, the document `ingest --json` prints or None, standard "
        "error).");
  m.def(
      "merge", &merge, nb::arg("partials"), nb::arg("out") = nb::none(),
      "`merge` as a library call: (exit code, the document `merge --json` prints or None, standard error).");
  m.def("plan", &plan, nb::arg("fabric"), nb::arg("nodes"), nb::arg("out"),
        nb::arg("collectives") = nb::none(), nb::arg("min_bytes") = nb::none(),
        nb::arg("max_bytes") = nb::none(), nb::arg("arms") = nb::none(), nb::arg("channels") = nb::none(),
        nb::arg("chunk_bytes") = nb::none(), nb::arg("launcher") = nb::none(),
        nb::arg("nccl_version") = nb::none(), nb::arg("gpus_per_node") = nb::none(),
        nb::arg("iters") = nb::none(), nb::arg("warmup") = nb::none(), nb::arg("step_factor") = nb::none(),
        nb::arg("startup_s") = nb::none(),
        "`plan` as a library call: (exit code, the document `plan --json` prints or None, standard error).");
  m.def("plan_status", &plan_status, nb::arg("dir"),
        "`plan --status DIR` as a library call: (exit code, its document or None, standard error).");
  m.def(
      "telemetry", &telemetry, nb::arg("logs"), nb::arg("out"), nb::arg("resamples") = nb::none(),
      nb::arg("seed") = nb::none(), nb::arg("level") = nb::none(), nb::arg("block_length") = nb::none(),
      nb::arg("threads") = nb::none(), nb::arg("backend") = nb::none(), nb::arg("figures") = true,
      nb::arg("replace") = false,
      "`telemetry` as a library call: (exit code, the paths `telemetry --json` prints with telemetry.json's "
      "content under 'telemetry_document', or None, standard error).");
  m.def("hipipe", &hipipe, nb::arg("fabric"), nb::arg("bytes"), nb::arg("nodes") = nb::none(),
        nb::arg("gpus_per_node") = nb::none(), nb::arg("chunks") = nb::none(),
        nb::arg("max_chunks") = nb::none(),
        "`hipipe` as a library call: (exit code, the document `hipipe --json` prints or None, standard "
        "error).");
  m.def("canonical_sweep", &canonical_sweep, nb::arg("source"), nb::arg("text") = nb::none(),
        "Reads a sweep CSV (the file `source`, or `text` named `source` in errors) and returns "
        "(exit code, canonical CSV, side-file text or '', error line).");
  m.def("set_progress", &set_progress, nb::arg("callable").none(),
        "Sends progress of long commands to callable(label, done, total, last); None: none.");
  m.def(
      "data_dir", [] { return ncclbot::resource_paths().data; },
      "The folder ncclbot found its fabric and HiPIPE presets in (empty when none).");
  m.def(
      "experiments_dir", [] { return ncclbot::resource_paths().experiments; },
      "The folder of the example studies (quick.toml, paper.toml, ...).");
}
