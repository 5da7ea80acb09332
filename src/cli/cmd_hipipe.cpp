// `ncclbot hipipe`: the HiPIPE model. One fabric and size: every scheduler's makespan,
// per-dimension utilisation and chunk plan (--json: one JSON document). --study: a sweep of
// fabrics, node counts and sizes into a table, a summary and (with python3) a figure.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/child_process.hpp"
#include "base/progress_line.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/byte_size.hpp"
#include "ncclbot/hipipe/comparison.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/study.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"
#include "study/run_folder.hpp"

namespace ncclbot::cli {
namespace hipipe_command {

struct HipipeOptions {
  std::string fabric, bytes, study, out;
  int nodes = 0, gpus_per_node = 0;
  int chunks = 4, max_chunks = 64;
  bool json = false, no_figure = false, replace = false;
};

int run_single(const HipipeOptions& opt) {
  if (opt.fabric.empty() || opt.bytes.empty())
    throw UsageError("hipipe: --fabric and --bytes are required (or --study)");
  const auto bytes = hipipe::parse_byte_size(opt.bytes);
  if (!bytes)
    throw UsageError("--bytes '" + opt.bytes + "': expected a byte count such as 1048576, 64M or 1G");
  if (*bytes == 0) throw UsageError("--bytes 0: an all-reduce of nothing has no schedule");
  if (static_cast<double>(*bytes) > hipipe::kMaxMessageBytes)
    throw UsageError("--bytes " + opt.bytes + ": above the largest all-reduce the model takes, " +
                     hipipe::kMaxMessageText);
  const hipipe::FabricPreset preset = hipipe::load_fabric_preset(opt.fabric);
  const int nodes = opt.nodes != 0 ? opt.nodes : preset.nodes;
  const int gpus = opt.gpus_per_node != 0 ? opt.gpus_per_node : preset.gpus_per_node;
  const hipipe::Network net = hipipe::build_network(preset, nodes, gpus);
  hipipe::SchedulerOptions so;
  so.baseline_chunks = opt.chunks;
  so.max_chunks = opt.max_chunks;
  const hipipe::Comparison c = hipipe::compare_schedulers(net, static_cast<double>(*bytes), so);
  if (opt.json) {
    nlohmann::json j = hipipe::comparison_json(c);
    j["nodes"] = nodes;
    j["gpus_per_node"] = gpus;
    command_out() << j.dump(2) << "\n";
    hipipe::print_comparison_table(c, command_err());
  } else {
    hipipe::print_comparison_table(c, command_out());
  }
  return 0;
}

// The files --study writes into its folder.
const std::set<std::string> kStudyOutputs = {"hipipe_cases.csv", "hipipe_summary.md", "hipipe_summary.json",
                                             "hipipe.png"};

int run_study(const HipipeOptions& opt) {
  if (opt.out.empty()) throw UsageError("hipipe --study needs --out DIR");
  for (const std::string& name : kStudyOutputs)
    check_output_not_input(opt.out + "/" + name, {opt.study}, "--out");
  const hipipe::Study study = hipipe::read_study(opt.study);
  // Claimed before the sweep, so a folder that is not ours stops the command at once.
  const ncclbot::study::RunFolder folder =
      ncclbot::study::RunFolder::claim(opt.out, "--out", {"hipipe --study", ""}, opt.replace);
  folder.record(kStudyOutputs);
  command_err() << "hipipe study: " << study.cases.size() << " cases x 5 schedulers\n";
  ProgressLine progress("hipipe study", study.cases.size());
  const hipipe::StudyResult result = hipipe::run_study(study, [&] { progress.units_done(1); });
  progress.finish();
  const nlohmann::json summary = hipipe::write_study_outputs(result, opt.out);
  const std::string script = resource_paths().scripts + "/hipipe_figure.py";
  if (!opt.no_figure && std::filesystem::exists(script)) {
    if (!ncclbot::run_child({"python3", script, opt.out}, ncclbot::ChildOutput::kToStderr).ok())
      command_err()
          << "hipipe: the figure was not drawn (python3 with matplotlib needed); tables are written\n";
  }
  if (opt.json) command_out() << summary.dump(2) << "\n";
  command_err() << "wrote " << opt.out << "/hipipe_cases.csv, hipipe_summary.md, hipipe_summary.json"
                << (opt.no_figure ? "" : ", hipipe.png") << "\n";
  command_err() << "mean reduction of HiPIPE vs hierarchical: "
                << 100 * summary["reduction_vs"]["hierarchical"]["mean"].get<double>()
                << "% (paper 28.85%), best "
                << "bandwidth utilisation: "
                << 100 * summary["hipipe_best_bandwidth_utilisation"]["value"].get<double>()
                << "% (paper 98.11%)\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<HipipeOptions>();
  app.add_option("--fabric", opt->fabric,
                 "fabric preset (h100-ib-a, gb200-mnnvl, h100-ib-3d, ...) or a .toml path");
  app.add_option("--bytes", opt->bytes, "all-reduce size per rank: 1048576, 64M, 1G, ...");
  CLI::Option* nodes = app.add_option("--nodes", opt->nodes, "nodes (default: the preset's)");
  CLI::Option* gpus =
      app.add_option("--gpus-per-node", opt->gpus_per_node, "GPUs per node (default: the preset's)");
  app.add_option("--chunks", opt->chunks, "chunk count of the equal-chunk and Themis baselines")
      ->capture_default_str();
  app.add_option("--max-chunks", opt->max_chunks, "upper end of HiPIPE's chunk-count search")
      ->capture_default_str();
  app.add_option("--study", opt->study, "run a study TOML (experiments/hipipe.toml) instead of one case");
  app.add_option("--out", opt->out, "output folder of --study");
  app.add_flag("--no-figure", opt->no_figure, "with --study: skip the matplotlib figure");
  app.add_flag("--replace", opt->replace,
               "with --study: replace what another command wrote in --out (or a non-empty folder ncclbot "
               "did not write)");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt, nodes, gpus] {
    if ((nodes->count() > 0 && opt->nodes < 1) || (gpus->count() > 0 && opt->gpus_per_node < 1))
      throw UsageError("--nodes and --gpus-per-node must be at least 1");
    if (opt->nodes > hipipe::kMaxNodes || opt->gpus_per_node > hipipe::kMaxGpusPerNode)
      throw UsageError("--nodes is at most " + std::to_string(hipipe::kMaxNodes) +
                       " and --gpus-per-node at most " + std::to_string(hipipe::kMaxGpusPerNode) +
                       ", as in a preset");
    return opt->study.empty() ? run_single(*opt) : run_study(*opt);
  };
}

const bool registered = register_command(
    {"hipipe", "HiPIPE model: pipelined hierarchical all-reduce schedulers on a multi-dimensional fabric",
     setup});

}  // namespace hipipe_command
}  // namespace ncclbot::cli
