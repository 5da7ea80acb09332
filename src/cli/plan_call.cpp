#include "cli/plan_call.hpp"

#include <algorithm>
#include <charconv>

#include "ncclbot/campaign/campaign_files.hpp"
#include "ncclbot/campaign/sweep_script.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/hipipe/byte_size.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::cli {
namespace {

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

}  // namespace

PlanCallResult plan_call(const PlanCallOptions& opt) {
  if (opt.fabric.empty()) throw UsageError("--fabric is required");
  if (opt.nodes.empty()) throw UsageError("--nodes is required");
  if (opt.out.empty()) throw UsageError("--out is required");
  // A folder name the generated scripts cannot hold as one word: a newline or another control
  // character (the shell's $(...) strips trailing newlines, so the scripts would write elsewhere).
  for (unsigned char c : opt.out)
    if (c < 0x20 || c == 0x7f)
      throw UsageError("--out: a control character in the folder name is not allowed");
  campaign::PlanOptions o;
  o.nodes = parse_node_list(opt.nodes, "--nodes");
  // 0 stands for the preset's GPUs per node, so only an explicit value is checked.
  if (opt.gpus_per_node && (*opt.gpus_per_node < 1 || *opt.gpus_per_node > kMaxPlanGpusPerNode))
    throw UsageError("--gpus-per-node must be in [1, " + std::to_string(kMaxPlanGpusPerNode) + "]");
  o.gpus_per_node = opt.gpus_per_node.value_or(0);
  o.collectives = parse_collective_list(opt.collectives, "--collectives");
  o.min_bytes = byte_size(opt.min_bytes, "--min-bytes");
  o.max_bytes = byte_size(opt.max_bytes, "--max-bytes");
  o.step_factor = opt.step_factor;
  o.iters = opt.iters;
  o.warmup = opt.warmup;
  if (!opt.arms.empty()) o.arms = parse_arms(opt.arms);
  o.channels = parse_channels(opt.channels);
  o.chunk_bytes = parse_chunks(opt.chunk_bytes);
  o.launcher = campaign::parse_launcher(opt.launcher);
  o.nccl_version = nccl_minor_version(opt.nccl_version, "--nccl-version");
  o.startup_s = opt.startup_s;
  PlanCallResult r;
  r.plan = campaign::make_plan(sim::load_fabric(opt.fabric), o);
  campaign::write_campaign_folder(opt.out, r.plan);
  r.out = opt.out;
  r.sweep_launches = campaign::sweep_launches(r.plan).size();
  return r;
}

nlohmann::json plan_document(const PlanCallResult& result) {
  const campaign::Plan& plan = result.plan;
  const std::string& out = result.out;
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

PlanStatusResult plan_status_call(const std::string& dir) {
  if (!campaign::is_campaign_dir(dir)) throw UsageError("--status: " + dir + " holds no campaign.toml");
  const campaign::Campaign c = campaign::read_campaign(dir);
  PlanStatusResult r;
  r.dir = dir;
  size_t counts[3] = {0, 0, 0};
  for (const campaign::CampaignRun& run : c.runs) {
    const campaign::RunStatus st = campaign::run_status(c, run);
    r.runs.push_back({run.id, st.state, st.reason});
    ++counts[int(st.state)];
  }
  r.done = counts[0];
  r.missing = counts[1];
  r.failed = counts[2];
  // sweep.sh's launches (NCCL >= 2.31), by their markers.
  for (const campaign::SweepLaunchStatus& s : campaign::sweep_status(c))
    r.sweeps.push_back({s.name, s.state, s.reason});
  return r;
}

nlohmann::json plan_status_document(const PlanStatusResult& r) {
  nlohmann::json runs = nlohmann::json::array(), sweeps = nlohmann::json::array();
  for (size_t i = 0; i < r.runs.size(); ++i)
    runs.push_back({{"index", i},
                    {"id", r.runs[i].id},
                    {"state", std::string(campaign::run_state_name(r.runs[i].state))},
                    {"reason", r.runs[i].reason}});
  for (const PlanRunState& s : r.sweeps)
    sweeps.push_back(
        {{"name", s.id}, {"state", std::string(campaign::run_state_name(s.state))}, {"reason", s.reason}});
  return {{"dir", r.dir},         {"runs", std::move(runs)}, {"done", r.done},
          {"missing", r.missing}, {"failed", r.failed},      {"sweeps", std::move(sweeps)}};
}

}  // namespace ncclbot::cli
