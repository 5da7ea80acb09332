// `ncclbot inspect SWEEP.csv`: what a sweep holds and, when it carries the model's prior, how much
// AUTO's picks lose when priced on the measured arms.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/loss.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::cli {
namespace inspect_command {

struct InspectOptions {
  std::string sweep_path;
  std::string nodes, collectives;
  bool json = false;
};

nlohmann::json inspect(const Sweep& sweep, const std::vector<int>& selected) {
  const SweepView v = sweep.view();
  ArmMask seen;
  int min_arms = kNumArms, max_arms = 0;
  uint64_t min_bytes = UINT64_MAX, max_bytes = 0;
  std::vector<double> auto_losses;
  for (int c : selected) {
    seen.bits |= v.mask(c).bits;
    min_arms = std::min(min_arms, v.mask(c).count());
    max_arms = std::max(max_arms, v.mask(c).count());
    min_bytes = std::min(min_bytes, sweep.context(c).bytes);
    max_bytes = std::max(max_bytes, sweep.context(c).bytes);
    if (v.has_prior()) auto_losses.push_back(relative_loss(v, c, auto_slot(v, c)));
  }
  nlohmann::json out;
  out["contexts"] = selected.size();
  out["arms"] = seen.count();
  out["samples"] = sweep.samples();
  if (!selected.empty()) {
    out["arms_per_context"] = {{"min", min_arms}, {"max", max_arms}};
    out["bytes"] = {{"min", min_bytes}, {"max", max_bytes}};
  }
  if (v.has_prior() && !auto_losses.empty()) {
    const LossSummary s = summarize_losses(auto_losses);
    const auto within_1pct =
        std::count_if(auto_losses.begin(), auto_losses.end(), [](double l) { return l <= 0.01; });
    out["auto"] = {{"mean", s.mean},
                   {"p99", s.p99},
                   {"max", s.max},
                   {"above_10pct", s.above_10pct},
                   {"within_1pct", within_1pct}};
  }
  return out;
}

void print_human(const nlohmann::json& j, std::ostream& os) {
  os << "contexts: " << j["contexts"] << ", arms seen: " << j["arms"] << ", samples per arm: " << j["samples"]
     << "\n";
  if (j.contains("arms_per_context"))
    os << "arms per context: " << j["arms_per_context"]["min"] << "-" << j["arms_per_context"]["max"]
       << ", sizes: " << j["bytes"]["min"] << "-" << j["bytes"]["max"] << " B\n";
  if (j.contains("auto")) {
    const auto& a = j["auto"];
    os << "AUTO priced on the measured arms: mean loss " << a["mean"].get<double>() * 100 << "%, p99 "
       << a["p99"].get<double>() * 100 << "%, max " << a["max"].get<double>() * 100
       << "%, contexts above 10%: " << a["above_10pct"] << ", within 1% of best: " << a["within_1pct"]
       << "\n";
  } else {
    os << "no prior in this sweep: AUTO's loss cannot be priced\n";
  }
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  app.add_option("sweep", opt->sweep_path, "sweep CSV")->required();
  app.add_option("--nodes", opt->nodes, "only these node counts, e.g. 16,32");
  app.add_option("--collectives", opt->collectives, "only these collectives, e.g. allreduce,allgather");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    ContextFilter filter;
    if (!opt->nodes.empty()) filter.nodes = parse_node_list(opt->nodes, "--nodes");
    if (!opt->collectives.empty())
      filter.collectives = parse_collective_list(opt->collectives, "--collectives");
    const Sweep sweep = read_sweep_csv(opt->sweep_path);
    const auto selected = filter.select_some(sweep, opt->sweep_path);
    const nlohmann::json j = inspect(sweep, selected);
    if (opt->json) {
      std::cout << j.dump(2) << "\n";
      print_human(j, std::cerr);
    } else {
      print_human(j, std::cout);
    }
    return 0;
  };
}

const bool registered =
    register_command({"inspect", "summarise a sweep: contexts, arms, samples, AUTO's loss", setup});

}  // namespace inspect_command
}  // namespace ncclbot::cli
