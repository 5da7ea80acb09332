// `ncclbot hipipe`: the HiPIPE model. One fabric and size: every scheduler's makespan,
// per-dimension utilisation and chunk plan (--json: one JSON document). --study: a sweep of
// fabrics, node counts and sizes into a table, a summary and (with python3) a figure. The library
// calls: cli/hipipe_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.hpp"
#include "cli/hipipe_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace hipipe_command {

// The command's options: the library calls' (cli/hipipe_call.hpp), --study's and --json.
struct HipipeOptions {
  HipipeCallOptions call;
  HipipeStudyCallOptions study;
  bool no_figure = false, json = false;
};

int run_single(const HipipeOptions& opt) {
  const HipipeCallResult r = hipipe_call(opt.call);
  if (opt.json) {
    command_out() << hipipe_document(r).dump(2) << "\n";
    hipipe::print_comparison_table(r.comparison, command_err());
  } else {
    hipipe::print_comparison_table(r.comparison, command_out());
  }
  return 0;
}

int run_study(const HipipeOptions& opt) {
  HipipeStudyCallOptions so = opt.study;
  so.figure = !opt.no_figure;
  const HipipeStudyCallResult r = hipipe_study_call(so);
  if (r.figure_failed)
    command_err()
        << "hipipe: the figure was not drawn (python3 with matplotlib needed); tables are written\n";
  if (opt.json) command_out() << r.summary.dump(2) << "\n";
  command_err() << "wrote " << so.out << "/hipipe_cases.csv, hipipe_summary.md, hipipe_summary.json"
                << (opt.no_figure ? "" : ", hipipe.png") << "\n";
  command_err() << "mean reduction of HiPIPE vs hierarchical: "
                << 100 * r.summary["reduction_vs"]["hierarchical"]["mean"].get<double>()
                << "% (paper 28.85%), best "
                << "bandwidth utilisation: "
                << 100 * r.summary["hipipe_best_bandwidth_utilisation"]["value"].get<double>()
                << "% (paper 98.11%)\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<HipipeOptions>();
  app.add_option("--fabric", opt->call.fabric,
                 "fabric preset (h100-ib-a, gb200-mnnvl, h100-ib-3d, ...) or a .toml path");
  app.add_option("--bytes", opt->call.bytes, "all-reduce size per rank: 1048576, 64M, 1G, ...");
  app.add_option("--nodes", opt->call.nodes, "nodes (default: the preset's)");
  app.add_option("--gpus-per-node", opt->call.gpus_per_node, "GPUs per node (default: the preset's)");
  app.add_option("--chunks", opt->call.chunks, "chunk count of the equal-chunk and Themis baselines")
      ->capture_default_str();
  app.add_option("--max-chunks", opt->call.max_chunks, "upper end of HiPIPE's chunk-count search")
      ->capture_default_str();
  app.add_option("--study", opt->study.study,
                 "run a study TOML (experiments/hipipe.toml) instead of one case");
  app.add_option("--out", opt->study.out, "output folder of --study");
  app.add_flag("--no-figure", opt->no_figure, "with --study: skip the matplotlib figure");
  app.add_flag("--replace", opt->study.replace,
               "with --study: replace what another command wrote in --out (or a non-empty folder ncclbot "
               "did not write)");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    if (opt->study.study.empty()) return run_single(*opt);  // the call checks the counts
    check_hipipe_counts(opt->call);                         // refused with --study too
    return run_study(*opt);
  };
}

const bool registered = register_command(
    {"hipipe", "HiPIPE model: pipelined hierarchical all-reduce schedulers on a multi-dimensional fabric",
     setup});

}  // namespace hipipe_command
}  // namespace ncclbot::cli
