// `ncclbot run STUDY.toml --out DIR`: tune, score and test a study end to end
// into a report folder; resumable (rerun the same command after an
// interruption).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/run_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "run/run_study.hpp"

namespace ncclbot::cli {
namespace run_command {

struct RunCommandOptions {
  std::string study;
  study::RunOptions run;
  bool no_figures = false;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<RunCommandOptions>();
  app.add_option("study", opt->study, "study file (experiments/*.toml)")->required();
  app.add_option("--out", opt->run.out_dir, "report folder (created; a rerun resumes from its units/)")
      ->required();
  app.add_option("--backend", opt->run.backend, "replay backend: cpu, cuda or auto (default: the study's)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--threads", opt->run.threads,
                 "CPU threads for the replay engine (0 or left out: all cores)")
      ->check(CLI::Range(0, 4096));
  app.add_flag("--no-figures", opt->no_figures, "skip drawing figures (no Python needed)");
  app.add_flag("--replace", opt->run.replace,
               "replace what another study (or another command) wrote in DIR; without it such a folder is "
               "refused");
  app.add_flag("--json", opt->json, "print one JSON document with the output paths on stdout");
  return [opt] {
    opt->run.figures = !opt->no_figures;
    const study::RunSummary s = study::run_study(opt->study, opt->run);
    if (opt->json) {
      command_out() << run_document(s).dump(2) << "\n";
    } else {
      command_out() << "report: " << s.report_html << "\n";
    }
    return 0;
  };
}

const bool registered =
    register_command({"run", "run a study (experiments/*.toml) end to end into a report folder", setup});

}  // namespace run_command
}  // namespace ncclbot::cli
