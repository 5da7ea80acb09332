// `ncclbot plan`: a forced-arm nccl-tests campaign for a cluster (campaign.toml, run.sh,
// run.sbatch) with the arms NCCL can run there, the ones left out and why, and what it costs;
// `ncclbot plan --status DIR` says which of a campaign's runs are done, missing or failed.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/campaign/campaign_files.hpp"
#include "ncclbot/campaign/plan.hpp"
#include "ncclbot/campaign/sweep_script.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/hipipe/byte_size.hpp"

namespace ncclbot::cli {
namespace plan_command {

struct PlanCliOptions {
  std::string fabric, nodes, collectives = "allreduce,allgather,reducescatter", min_bytes = "8",
                             max_bytes = "8G", arms, launcher = "srun", out, status, channels = "0",
                             chunk_bytes = "0", nccl_version = "2.32";
  int gpus_per_node = 0, iters = 50, warmup = 5;
  uint64_t step_factor = 2;
  double startup_s = 30.0;
  bool json = false;
};

// The most GPUs per node campaign.toml reads back (campaign.cpp).
constexpr int kMaxPlanGpusPerNode = 1024;

uint64_t byte_size(const std::string& text, const char* option) {
  const auto v = hipipe::parse_byte_size(text);
  if (!v)
    throw UsageError(std::string(option) + ": " + quoted_value(text) + " is not a size (e.g. 8, 64K, 8G)");
  return *v;
}

// A comma-separated list, each item read by `item` (which throws UsageError naming `option`).
template <typename T, typename Read>
std::vector<T> comma_list(const std::string& text, Read item) {
  std::vector<T> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(item(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// "0,8,16": channel counts, 0 for NCCL's own (plan checks the range and names the option).
std::vector<int> parse_channels(const std::string& text) {
  return comma_list<int>(text, [](const std::string& item) {
    int v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw UsageError("--channels: " + quoted_value(item) + " is not a channel count (0: NCCL's own, 1-64)");
    return v;
  });
}

// "0,64K,512K": chunk sizes, 0 for NCCL's own.
std::vector<uint64_t> parse_chunks(const std::string& text) {
  return comma_list<uint64_t>(text, [](const std::string& item) { return byte_size(item, "--chunk-bytes"); });
}

// "Ring/LL,Tree/Simple" or a bare algorithm ("NVLS"): every protocol of it.
std::vector<int> parse_arms(const std::string& text) {
  std::vector<int> slots;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t slash = item.find('/');
    const auto algo = parse_nccl_algo(item.substr(0, slash));
    if (!algo)
      throw UsageError("--arms: '" + item + "' is not ALGO or ALGO/PROTO (" +
                       std::string(nccl_algo_names_list()) + ")");
    if (slash == std::string::npos) {
      for (int p = 0; p < kNumProtos; ++p) slots.push_back(arm_slot(*algo, Proto(p)));
    } else {
      const auto proto = parse_proto(item.substr(slash + 1));
      if (!proto)
        throw UsageError("--arms: '" + item + "': unknown protocol (" + std::string(proto_names_list()) +
                         ")");
      slots.push_back(arm_slot(*algo, *proto));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

std::string hours(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", seconds / 3600.0);
  return buf;
}

nlohmann::json plan_json(const campaign::Plan& plan, const std::string& out) {
  const campaign::PlanOptions& o = plan.options;
  nlohmann::json runs = nlohmann::json::array(), left = nlohmann::json::array(),
                 by_nodes = nlohmann::json::array();
  for (const auto& r : plan.runs) {
    const auto [nccl_algo, nccl_proto] = campaign::forced_values(o, r);
    runs.push_back({{"index", runs.size()},
                    {"id", r.id},
                    {"nodes", r.nodes},
                    {"collective", campaign::collective_key(r.collective)},
                    {"algo", std::string(algo_name(slot_algo(r.slot)))},
                    {"proto", std::string(proto_name(slot_proto(r.slot)))},
                    {"channels", r.knobs.channels},
                    {"chunk_bytes", r.knobs.chunk_bytes},
                    {"program", campaign::test_binary(r.collective)},
                    {"min_bytes", r.sizes.front()},
                    {"max_bytes", r.sizes.back()},
                    {"sizes", r.sizes.size()},
                    {"nccl_algo", nccl_algo},
                    {"nccl_proto", nccl_proto},
                    {"predicted_s", r.seconds}});
  }
  for (const auto& l : plan.left_out) {
    nlohmann::json j = {
        {"nodes", l.nodes}, {"collective", campaign::collective_key(l.collective)}, {"reason", l.reason}};
    if (l.slot >= 0)
      j.update({{"algo", std::string(algo_name(slot_algo(l.slot)))},
                {"proto", std::string(proto_name(slot_proto(l.slot)))}});
    if (l.chunk_bytes > 0) j["chunk_bytes"] = l.chunk_bytes;
    left.push_back(std::move(j));
  }
  std::vector<int> nodes;
  for (const auto& r : plan.runs)
    if (std::find(nodes.begin(), nodes.end(), r.nodes) == nodes.end()) nodes.push_back(r.nodes);
  for (int n : nodes) {
    const campaign::Cost c = campaign::cost_of(plan, n);
    by_nodes.push_back({{"nodes", n}, {"runs", c.runs}, {"seconds", c.seconds}, {"gpu_hours", c.gpu_hours}});
  }
  const campaign::Cost total = campaign::cost_of(plan, 0);
  const campaign::Cost sweep = campaign::sweep_cost_of(plan, 0);
  return {
      {"out", out},
      {"fabric", plan.fabric},
      {"gpus_per_node", plan.gpus_per_node},
      {"min_bytes", o.min_bytes},
      {"max_bytes", o.max_bytes},
      {"step_factor", o.step_factor},
      {"iters", o.iters},
      {"warmup", o.warmup},
      {"launcher", std::string(campaign::launcher_name(o.launcher))},
      {"nccl_version", o.nccl_version},
      {"forced_per_function", campaign::forces_per_function(o)},
      {"channels", o.channels},
      {"chunk_bytes", o.chunk_bytes},
      {"startup_s", o.startup_s},
      {"runs", std::move(runs)},
      {"left_out", std::move(left)},
      {"cost",
       {{"by_nodes", std::move(by_nodes)},
        {"total", {{"runs", total.runs}, {"seconds", total.seconds}, {"gpu_hours", total.gpu_hours}}},
        // The same arms timed by ncclbot-sweep where NCCL >= 2.31 (campaign/plan.hpp sweep_cost_of);
        // `nccl_tests_runs`: the runs with a chunk size, which it cannot set, still run by nccl-tests.
        {"ncclbot_sweep",
         {{"seconds", sweep.seconds}, {"gpu_hours", sweep.gpu_hours}, {"nccl_tests_runs", sweep.runs}}}}}};
}

void print_plan(const nlohmann::json& j, std::ostream& os) {
  os << "plan: " << j["fabric"].get<std::string>() << ", " << j["gpus_per_node"] << " GPUs per node, sizes "
     << j["min_bytes"] << ".." << j["max_bytes"] << " B (x" << j["step_factor"] << "), " << j["iters"]
     << " timed iterations after " << j["warmup"] << " warm-up, launcher " << j["launcher"].get<std::string>()
     << "\n";
  os << "forcing for NCCL " << j["nccl_version"].get<std::string>() << ": "
     << (j["forced_per_function"].get<bool>()
             ? "each run names its own collective (NCCL_ALGO=AllReduce:Ring); a plain value would leave "
               "every other collective no algorithm from 2.31 on"
             : "plain NCCL_ALGO/NCCL_PROTO values (one collective per nccl-tests run)")
     << "\n";
  if (j["channels"] != nlohmann::json::array({0}) || j["chunk_bytes"] != nlohmann::json::array({0}))
    os << "knob points: channels " << j["channels"].dump() << " x chunk_bytes " << j["chunk_bytes"].dump()
       << " (0: NCCL's own; one run per arm and knob point)\n";
  os << "runs: " << j["runs"].size() << " (one per nodes, collective and arm; one job array task each)\n";
  os << "left out: " << j["left_out"].size() << "\n";
  for (const auto& l : j["left_out"])
    os << "  " << l["nodes"] << " nodes " << l["collective"].get<std::string>() << " "
       << l["reason"].get<std::string>() << "\n";
  os << "expected cluster time (cost model x calls x sizes + " << j["startup_s"] << " s start-up per job):\n";
  char line[128];
  std::snprintf(line, sizeof line, "  %6s %6s %10s %10s\n", "nodes", "runs", "wall h", "GPU-hours");
  os << line;
  for (const auto& c : j["cost"]["by_nodes"]) {
    std::snprintf(line, sizeof line, "  %6d %6zu %10s %10.2f\n", c["nodes"].get<int>(),
                  c["runs"].get<size_t>(), hours(c["seconds"].get<double>()).c_str(),
                  c["gpu_hours"].get<double>());
    os << line;
  }
  const auto& t = j["cost"]["total"];
  std::snprintf(line, sizeof line, "  %6s %6zu %10s %10.2f\n", "total", t["runs"].get<size_t>(),
                hours(t["seconds"].get<double>()).c_str(), t["gpu_hours"].get<double>());
  os << line;
  const auto& s = j["cost"]["ncclbot_sweep"];
  os << "with ncclbot-sweep (NCCL >= 2.31: every arm of a node count and collective in one launch, call by "
        "call): "
     << hours(s["seconds"].get<double>()) << " h wall, " << hours(s["gpu_hours"].get<double>() * 3600.0)
     << " GPU-hours";
  if (s["nccl_tests_runs"].get<size_t>() > 0)
    os << " (" << s["nccl_tests_runs"].get<size_t>() << " runs with a chunk size still by nccl-tests)";
  os << "\n";
}

int status(const std::string& dir, bool json) {
  if (!campaign::is_campaign_dir(dir)) throw UsageError("--status: " + dir + " holds no campaign.toml");
  const campaign::Campaign c = campaign::read_campaign(dir);
  std::ostream& os = json ? command_err() : command_out();
  // One line per run or launch, its state counted; its JSON row is the caller's.
  const auto line = [&](size_t* counts, const std::string& label, campaign::RunState state,
                        const std::string& reason) {
    ++counts[int(state)];
    os << "  " << campaign::run_state_name(state) << "  " << label << (reason.empty() ? "" : ": " + reason)
       << "\n";
    return std::string(campaign::run_state_name(state));
  };
  const auto tally = [&](const std::string& what, const size_t* counts) {
    os << what << ": " << counts[0] << " done, " << counts[1] << " missing, " << counts[2] << " failed\n";
  };
  nlohmann::json runs = nlohmann::json::array();
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const campaign::RunStatus st = campaign::run_status(c, c.runs[i]);
    runs.push_back({{"index", i},
                    {"id", c.runs[i].id},
                    {"state", line(counts, c.runs[i].id, st.state, st.reason)},
                    {"reason", st.reason}});
  }
  tally(std::to_string(c.runs.size()) + " runs", counts);
  // sweep.sh's launches (NCCL >= 2.31), by their markers.
  nlohmann::json sweeps = nlohmann::json::array();
  size_t sweep_counts[3] = {0, 0, 0};
  const std::vector<campaign::SweepLaunchStatus> launches = campaign::sweep_status(c);
  for (const campaign::SweepLaunchStatus& s : launches)
    sweeps.push_back({{"name", s.name},
                      {"state", line(sweep_counts, "sweep " + s.name, s.state, s.reason)},
                      {"reason", s.reason}});
  if (!launches.empty()) tally("sweep.sh, " + std::to_string(launches.size()) + " launches", sweep_counts);
  if (json)
    command_out() << nlohmann::json{{"dir", dir},          {"runs", std::move(runs)},
                                    {"done", counts[0]},   {"missing", counts[1]},
                                    {"failed", counts[2]}, {"sweeps", std::move(sweeps)}}
                         .dump(2)
                  << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<PlanCliOptions>();
  app.add_option("--fabric", opt->fabric, "fabric preset of the cluster (data/fabrics/NAME.toml)");
  app.add_option("--nodes", opt->nodes, "node counts, e.g. 2,4,8");
  CLI::Option* gpus_option =
      app.add_option("--gpus-per-node", opt->gpus_per_node, "GPUs (ranks) per node (default: the preset's)");
  app.add_option("--collectives", opt->collectives, "default allreduce,allgather,reducescatter");
  app.add_option("--min-bytes", opt->min_bytes, "smallest size, nccl-tests -b (default 8)");
  app.add_option("--max-bytes", opt->max_bytes, "largest size, nccl-tests -e (default 8G)");
  app.add_option("--step-factor", opt->step_factor, "size factor, nccl-tests -f (default 2)");
  app.add_option("--iters", opt->iters, "timed iterations per size, nccl-tests -n (default 50)");
  app.add_option("--warmup", opt->warmup, "warm-up iterations, nccl-tests -w (default 5)");
  app.add_option("--arms", opt->arms, "only these arms: ALGO/PROTO or ALGO, comma-separated (default: all)");
  app.add_option("--channels", opt->channels,
                 "channel counts to force (NCCL_MIN_CTAS = NCCL_MAX_CTAS), 0 = NCCL's own (default 0)");
  app.add_option(
      "--chunk-bytes", opt->chunk_bytes,
      "chunk sizes to force through ncclbot's tuner plugin (NCCL 2.30.3+), 0 = NCCL's own (default 0)");
  app.add_option("--launcher", opt->launcher, "srun (default) or mpirun");
  app.add_option(
      "--nccl-version", opt->nccl_version,
      "the NCCL the runs use (default 2.32); from 2.31 each run forces its arm for its own collective");
  app.add_option("--startup-s", opt->startup_s, "start-up seconds per job in the cost estimate (default 30)");
  app.add_option("--out", opt->out, "campaign folder to write");
  app.add_option("--status", opt->status,
                 "report each run of this campaign folder as done, missing or failed");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt, gpus_option] {
    if (!opt->status.empty()) {
      if (!opt->out.empty() || !opt->fabric.empty()) throw UsageError("--status takes no other plan options");
      return status(opt->status, opt->json);
    }
    if (opt->fabric.empty()) throw UsageError("--fabric is required");
    if (opt->nodes.empty()) throw UsageError("--nodes is required");
    if (opt->out.empty()) throw UsageError("--out is required");
    // A folder name the generated scripts cannot hold as one word: a newline or another control
    // character (the shell's $(...) strips trailing newlines, so the scripts would write elsewhere).
    for (unsigned char c : opt->out)
      if (c < 0x20 || c == 0x7f)
        throw UsageError("--out: a control character in the folder name is not allowed");
    campaign::PlanOptions o;
    o.nodes = parse_node_list(opt->nodes, "--nodes");
    // 0 stands for the preset's GPUs per node, so only an explicit value is checked.
    if (gpus_option->count() > 0 && (opt->gpus_per_node < 1 || opt->gpus_per_node > kMaxPlanGpusPerNode))
      throw UsageError("--gpus-per-node must be in [1, " + std::to_string(kMaxPlanGpusPerNode) + "]");
    o.gpus_per_node = opt->gpus_per_node;
    o.collectives = parse_collective_list(opt->collectives, "--collectives");
    o.min_bytes = byte_size(opt->min_bytes, "--min-bytes");
    o.max_bytes = byte_size(opt->max_bytes, "--max-bytes");
    o.step_factor = opt->step_factor;
    o.iters = opt->iters;
    o.warmup = opt->warmup;
    if (!opt->arms.empty()) o.arms = parse_arms(opt->arms);
    o.channels = parse_channels(opt->channels);
    o.chunk_bytes = parse_chunks(opt->chunk_bytes);
    o.launcher = campaign::parse_launcher(opt->launcher);
    o.nccl_version = nccl_minor_version(opt->nccl_version, "--nccl-version");
    o.startup_s = opt->startup_s;
    const campaign::Plan plan = campaign::make_plan(sim::load_fabric(opt->fabric), o);
    campaign::write_campaign_folder(opt->out, plan);
    const nlohmann::json j = plan_json(plan, opt->out);
    std::ostream& os = opt->json ? command_err() : command_out();
    print_plan(j, os);
    os << "wrote " << opt->out << "/campaign.toml, run.sh, run.sbatch; run `bash " << opt->out
       << "/run.sbatch` (Slurm) or `bash " << opt->out << "/run.sh`, then `ncclbot ingest " << opt->out
       << "`\n";
    if (const auto launches = campaign::sweep_launches(plan); !launches.empty())
      os << "wrote " << opt->out << "/sweep.sh and sweep.sbatch: the same arms by ncclbot-sweep in "
         << launches.size() << (launches.size() == 1 ? " launch" : " launches")
         << " (one per node count and collective; runs with a chunk size stay run.sh's), "
            "each writing "
         << opt->out << "/sweeps/NAME.csv\n";
    if (opt->json) command_out() << j.dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"plan", "write a forced-arm nccl-tests campaign (manifest, Slurm array, script) and its cost", setup});

}  // namespace plan_command
}  // namespace ncclbot::cli
