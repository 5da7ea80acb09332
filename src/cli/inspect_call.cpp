#include "cli/inspect_call.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/loss.hpp"

namespace ncclbot::cli {
namespace {

PickLosses pick_losses(const std::vector<double>& losses) {
  return {summarize_losses(losses),
          long(std::count_if(losses.begin(), losses.end(), [](double l) { return l <= 0.01; }))};
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

// The sizes every context of the selection spans.
void set_ranges(InspectCallResult& r, const Sweep& sweep, const std::vector<int>& selected,
                const std::vector<size_t>& arms_per_context) {
  r.min_arms = SIZE_MAX;
  r.min_bytes = UINT64_MAX;
  for (size_t i = 0; i < selected.size(); ++i) {
    r.min_arms = std::min(r.min_arms, arms_per_context[i]);
    r.max_arms = std::max(r.max_arms, arms_per_context[i]);
    r.min_bytes = std::min(r.min_bytes, sweep.context(selected[i]).bytes);
    r.max_bytes = std::max(r.max_bytes, sweep.context(selected[i]).bytes);
  }
  if (selected.empty()) r.min_arms = 0, r.min_bytes = 0;
}

// A sweep whose arms set channels or chunk sizes: its arms, and how much NCCL's default loses
// against the best arm measured (the knobs' room to gain).
InspectCallResult inspect_knobs(const Sweep& sweep, const std::vector<int>& selected) {
  InspectCallResult r;
  r.knob_arms = true;
  std::set<Arm> seen;
  std::vector<size_t> arms_per_context;
  std::vector<double> default_losses, headroom;
  for (int c : selected) {
    const auto arms = sweep.arms(c);
    seen.insert(arms.begin(), arms.end());
    arms_per_context.push_back(arms.size());
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
  r.arms = seen.size();
  set_ranges(r, sweep, selected, arms_per_context);
  if (!default_losses.empty()) r.auto_loss = pick_losses(default_losses);
  // On the samples' means, which for arms of equal latency bias upward.
  if (!headroom.empty()) r.knob_headroom = pick_losses(headroom);
  return r;
}

InspectCallResult inspect(const Sweep& sweep, const std::vector<int>& selected) {
  if (!sweep.slot_shaped()) return inspect_knobs(sweep, selected);
  const SweepView v = sweep.view();
  InspectCallResult r;
  ArmMask seen;
  std::vector<size_t> arms_per_context;
  std::vector<double> auto_losses;
  for (int c : selected) {
    seen.bits |= v.mask(c).bits;
    arms_per_context.push_back(size_t(v.mask(c).count()));
    if (v.has_prior()) auto_losses.push_back(relative_loss(v, c, auto_slot(v, c)));
  }
  r.arms = size_t(seen.count());
  set_ranges(r, sweep, selected, arms_per_context);
  if (!auto_losses.empty()) r.auto_loss = pick_losses(auto_losses);
  return r;
}

nlohmann::json losses_json(const PickLosses& l) {
  return {{"mean", l.summary.mean},
          {"p99", l.summary.p99},
          {"max", l.summary.max},
          {"above_10pct", l.summary.above_10pct},
          {"within_1pct", l.within_1pct}};
}

}  // namespace

InspectCallResult inspect_call(const InspectCallOptions& o) {
  ContextFilter filter;
  if (!o.nodes.empty()) filter.nodes = parse_node_list(o.nodes, "--nodes");
  if (!o.collectives.empty()) filter.collectives = parse_collective_list(o.collectives, "--collectives");
  const Sweep sweep = read_sweep_csv(o.sweep_path);
  const std::vector<int> selected = filter.select_some(sweep, o.sweep_path);
  InspectCallResult r = inspect(sweep, selected);
  r.contexts = selected.size();
  r.samples = sweep.samples();
  return r;
}

nlohmann::json inspect_document(const InspectCallResult& r) {
  nlohmann::json out;
  out["contexts"] = r.contexts;
  out["arms"] = r.arms;
  out["samples"] = r.samples;
  if (r.knob_arms) out["knob_arms"] = true;
  if (r.contexts > 0) {
    out["arms_per_context"] = {{"min", r.min_arms}, {"max", r.max_arms}};
    out["bytes"] = {{"min", r.min_bytes}, {"max", r.max_bytes}};
  }
  if (r.auto_loss) out["auto"] = losses_json(*r.auto_loss);
  if (r.knob_headroom) out["knob_headroom"] = losses_json(*r.knob_headroom);
  return out;
}

}  // namespace ncclbot::cli
