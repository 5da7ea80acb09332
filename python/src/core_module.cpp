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
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/progress_line.hpp"
#include "cli/dispatch.hpp"
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
