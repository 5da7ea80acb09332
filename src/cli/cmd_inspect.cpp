// `ncclbot inspect SWEEP.csv`: what a sweep holds and, when it carries the model's prior, how much
// AUTO's picks lose when priced on the measured arms.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
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

// Mean, p99, max and counts of the losses of one pick per context.
nlohmann::json loss_json(const std::vector<double>& losses) {
  const LossSummary s = summarize_losses(losses);
  const auto within_1pct = std::count_if(losses.begin(), losses.end(), [](double l) { return l <= 0.01; });
  return {{"mean", s.mean},
          {"p99", s.p99},
          {"max", s.max},
          {"above_10pct", s.above_10pct},
          {"within_1pct", within_1pct}};
}

// NCCL's default for a knob context: AUTO's algorithm and protocol (argmin of the prior over NCCL's
// arms, lowest first on a tie) with NCCL's own channels and chunk; -1 without a prior.
int knob_default_arm(const Sweep& sweep, int c) {
  if (!sweep.has_prior()) return -1;
  const auto arms = sweep.arms(c);
  int pick = -1;
  for (int i = 0; i < int(arms.size()); ++i) {
    const Arm& a = arms[size_t(i)];
    if (!a.default_knobs() || !is_nccl_slot(a.slot())) continue;
    if (pick < 0 || sweep.arm_prior(c, i) < sweep.arm_prior(c, pick)) pick = i;
  }
  return pick;
}

// A sweep whose arms set channels or chunk sizes: its arms, and how much NCCL's default loses
// against the best arm measured (the knobs' room to gain).
nlohmann::json inspect_knobs(const Sweep& sweep, const std::vector<int>& selected) {
  std::set<Arm> seen;
  size_t min_arms = SIZE_MAX, max_arms = 0;
  uint64_t min_bytes = UINT64_MAX, max_bytes = 0;
  std::vector<double> default_losses, headroom;
  for (int c : selected) {
    const auto arms = sweep.arms(c);
    seen.insert(arms.begin(), arms.end());
    min_arms = std::min(min_arms, arms.size());
    max_arms = std::max(max_arms, arms.size());
    min_bytes = std::min(min_bytes, sweep.context(c).bytes);
    max_bytes = std::max(max_bytes, sweep.context(c).bytes);
    double best = sweep.arm_mean(c, 0), best_own = HUGE_VAL;  // over every arm, at NCCL's knobs
    for (int i = 0; i < int(arms.size()); ++i) {
      const double m = sweep.arm_mean(c, i);
      best = std::min(best, m);
      if (arms[size_t(i)].default_knobs()) best_own = std::min(best_own, m);
    }
    if (best_own < HUGE_VAL) headroom.push_back(best_own / best - 1.0);
    const int pick = knob_default_arm(sweep, c);
    if (pick >= 0) default_losses.push_back(sweep.arm_mean(c, pick) / best - 1.0);
  }
  nlohmann::json out;
  out["contexts"] = selected.size();
  out["arms"] = seen.size();
  out["samples"] = sweep.samples();
  out["knob_arms"] = true;
  if (!selected.empty()) {
    out["arms_per_context"] = {{"min", min_arms}, {"max", max_arms}};
    out["bytes"] = {{"min", min_bytes}, {"max", max_bytes}};
  }
  if (!default_losses.empty()) out["auto"] = loss_json(default_losses);
  // The best arm at NCCL's own channels and chunk against the best arm: what a learner kept to NCCL's
  // knobs loses at best, on the samples' means (which arms of equal latency bias upward).
  if (!headroom.empty()) out["knob_headroom"] = loss_json(headroom);
  return out;
}

nlohmann::json inspect(const Sweep& sweep, const std::vector<int>& selected) {
  if (!sweep.slot_shaped()) return inspect_knobs(sweep, selected);
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
  if (v.has_prior() && !auto_losses.empty()) out["auto"] = loss_json(auto_losses);
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
    os << (j.contains("knob_arms") ? "NCCL's default (AUTO's algorithm and protocol, NCCL's own channels and "
                                     "chunk) priced on the measured arms: mean loss "
                                   : "AUTO priced on the measured arms: mean loss ")
       << a["mean"].get<double>() * 100 << "%, p99 " << a["p99"].get<double>() * 100 << "%, max "
       << a["max"].get<double>() * 100 << "%, contexts above 10%: " << a["above_10pct"]
       << ", within 1% of best: " << a["within_1pct"] << "\n";
  } else {
    os << "no prior in this sweep: AUTO's loss cannot be priced\n";
  }
  if (j.contains("knob_headroom")) {
    const auto& h = j["knob_headroom"];
    os << "knob headroom (the best arm at NCCL's own channels and chunk against the best arm, on the "
          "samples' means): mean "
       << h["mean"].get<double>() * 100 << "%, max " << h["max"].get<double>() * 100
       << "%, contexts above 10%: " << h["above_10pct"] << "\n";
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
      command_out() << j.dump(2) << "\n";
      print_human(j, command_err());
    } else {
      print_human(j, command_out());
    }
    return 0;
  };
}

const bool registered =
    register_command({"inspect", "summarise a sweep: contexts, arms, samples, AUTO's loss", setup});

}  // namespace inspect_command
}  // namespace ncclbot::cli
