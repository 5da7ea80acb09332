#include "cli/hipipe_call.hpp"

#include <filesystem>
#include <set>

#include "base/child_process.hpp"
#include "base/progress_line.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/byte_size.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/study.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"
#include "study/run_folder.hpp"

namespace ncclbot::cli {
namespace {

// The files a study writes into its folder.
const std::set<std::string> kStudyOutputs = {"hipipe_cases.csv", "hipipe_summary.md", "hipipe_summary.json",
                                             "hipipe.png"};

}  // namespace

void check_hipipe_counts(const HipipeCallOptions& opt) {
  if ((opt.nodes && *opt.nodes < 1) || (opt.gpus_per_node && *opt.gpus_per_node < 1))
    throw UsageError("--nodes and --gpus-per-node must be at least 1");
  if (opt.nodes.value_or(0) > hipipe::kMaxNodes || opt.gpus_per_node.value_or(0) > hipipe::kMaxGpusPerNode)
    throw UsageError("--nodes is at most " + std::to_string(hipipe::kMaxNodes) +
                     " and --gpus-per-node at most " + std::to_string(hipipe::kMaxGpusPerNode) +
                     ", as in a preset");
}

HipipeCallResult hipipe_call(const HipipeCallOptions& opt) {
  check_hipipe_counts(opt);
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
  HipipeCallResult r;
  r.nodes = opt.nodes.value_or(preset.nodes);
  r.gpus_per_node = opt.gpus_per_node.value_or(preset.gpus_per_node);
  const hipipe::Network net = hipipe::build_network(preset, r.nodes, r.gpus_per_node);
  hipipe::SchedulerOptions so;
  so.baseline_chunks = opt.chunks;
  so.max_chunks = opt.max_chunks;
  r.comparison = hipipe::compare_schedulers(net, static_cast<double>(*bytes), so);
  return r;
}

nlohmann::json hipipe_document(const HipipeCallResult& r) {
  nlohmann::json j = hipipe::comparison_json(r.comparison);
  j["nodes"] = r.nodes;
  j["gpus_per_node"] = r.gpus_per_node;
  return j;
}

HipipeStudyCallResult hipipe_study_call(const HipipeStudyCallOptions& opt) {
  if (opt.out.empty()) throw UsageError("hipipe --study needs --out DIR");
  for (const std::string& name : kStudyOutputs)
    check_output_not_input(opt.out + "/" + name, {opt.study}, "--out");
  const hipipe::Study study = hipipe::read_study(opt.study);
  // Claimed before the sweep, so a folder that is not ours stops the call at once.
  const ncclbot::study::RunFolder folder =
      ncclbot::study::RunFolder::claim(opt.out, "--out", {"hipipe --study", ""}, opt.replace);
  folder.record(kStudyOutputs);
  HipipeStudyCallResult r;
  r.cases = study.cases.size();
  command_err() << "hipipe study: " << study.cases.size() << " cases x 5 schedulers\n";
  ProgressLine progress("hipipe study", study.cases.size());
  const hipipe::StudyResult result = hipipe::run_study(study, [&] { progress.units_done(1); });
  progress.finish();
  r.summary = hipipe::write_study_outputs(result, opt.out);
  const std::string script = resource_paths().scripts + "/hipipe_figure.py";
  if (opt.figure && std::filesystem::exists(script))
    r.figure_failed = !ncclbot::run_child({"python3", script, opt.out}, ncclbot::ChildOutput::kToStderr).ok();
  return r;
}

}  // namespace ncclbot::cli
