// ncclbot._core, the compiled half of the Python package: the commands of the `ncclbot` program run
// in process (cli/dispatch.hpp), so Python gets exactly what the CLI prints (its --json document,
// its one-line errors, its exit codes), and the sweep CSV in its canonical form. The GIL is released
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
#include <vector>

#include "base/progress_line.hpp"
#include "cli/dispatch.hpp"
#include "cli/model_call.hpp"
#include "cli/replay_call.hpp"
#include "ncclbot/core/command_streams.hpp"
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

// `replay` as a library call (cli/replay_call.hpp): typed options, the document `replay --json` prints,
// no command line.
CallOutcome replay(const std::string& sweep, const std::vector<std::string>& policies, int seeds, int horizon,
                   std::optional<uint64_t> seed, std::optional<int> delay, std::optional<int> window,
                   std::optional<int> policy_start, std::optional<std::string> as_deployed,
                   std::optional<std::string> nccl_version, std::optional<std::string> observation_cost,
                   std::optional<int> threads, std::optional<std::string> backend,
                   std::optional<std::vector<std::string>> nodes,
                   std::optional<std::vector<std::string>> collectives) {
  ncclbot::cli::ReplayCallOptions o;
  o.sweep_path = sweep;
  o.policies = policies;
  o.seeds = seeds;
  o.horizon = horizon;
  o.seed = seed.value_or(0);
  o.feedback.delay = delay;
  o.feedback.window = window;
  o.feedback.policy_start = policy_start;
  o.feedback.as_deployed = as_deployed.value_or("");
  o.feedback.nccl_version = nccl_version.value_or("");
  o.feedback.observation_cost = observation_cost.value_or("");
  o.threads = threads.value_or(0);
  o.backend = backend.value_or("cpu");
  o.nodes = nodes ? comma_joined(*nodes) : "";
  o.collectives = collectives ? comma_joined(*collectives) : "";
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

// A sweep read strictly (from a file, or from CSV text such as a DataFrame's) and written back in
// canonical form: floats in their shortest exact form, so reading it again is bit-identical.
// (exit code, CSV, side-file text, error): the side text is empty without side data.
using SweepOutcome = std::tuple<int, std::string, std::string, std::string>;

SweepOutcome canonical_sweep(const std::string& source, const std::optional<std::string>& text) {
  // A file name is read up to its first NUL: "keep\0.csv" would open "keep".
  if (!text && source.find('\0') != std::string::npos) {
    return {2, "", "", "ncclbot: a sweep path holds a NUL byte\n"};
  }
  nb::gil_scoped_release released;
  std::ostringstream out, err;
  std::string side;
  try {
    std::optional<ncclbot::Sweep> sweep;
    if (text) {
      std::istringstream in(*text);
      sweep.emplace(ncclbot::parse_sweep_csv(in, source));
    } else {
      sweep.emplace(ncclbot::read_sweep_csv(source));
    }
    ncclbot::write_sweep_csv(*sweep, out);
    side = ncclbot::sweep_side_data_text(sweep->dynamics());
  } catch (...) {
    const int code = ncclbot::cli::report_failure(std::current_exception(), err);
    return {code, "", "", err.str()};
  }
  return {0, out.str(), side, ""};
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
        nb::arg("collectives") = nb::none(),
        "`replay` as a library call, without the command line: (exit code, the document `replay --json` "
        "prints as Python objects or None, standard error: warnings or the one-line error). None: the "
        "CLI's default; nodes and collectives as lists of their words.");
  m.def("model", &model, nb::arg("bytes"), nb::arg("fabric") = nb::none(), nb::arg("collective") = nb::none(),
        nb::arg("nodes") = nb::none(), nb::arg("gpus_per_node") = nb::none(),
        "`model` as a library call: (exit code, the document `model --json` prints as Python objects or "
        "None, standard error). None: the CLI's default.");
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
