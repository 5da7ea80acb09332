#include "study/policy_replay.hpp"

#include <iostream>
#include <map>
#include <sstream>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/horizon_curve.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/supervised/supervised.hpp"

namespace ncclbot::study {
namespace {

// A job of `configs` on `contexts`; supervised selectors are fitted on `tune_contexts`, and judged
// leave-one-out when those are the contexts replayed (tuning).
ReplayJob make_job(const Sweep& sweep, const std::vector<int>& contexts,
                   const std::vector<std::string>& configs, const std::vector<int>& tune_contexts,
                   bool leave_one_out, const ReplaySettings& s) {
  ReplayJob job;
  job.sweep = &sweep;
  job.contexts = contexts;
  job.seeds = s.seeds;
  job.seed_base = s.seed;
  job.horizon = s.horizon;
  job.delay = s.delay;
  job.window = s.window;
  job.policy_start = s.policy_start;
  job.threads = s.threads > 0 ? s.threads : default_thread_count();
  for (const auto& c : configs) {
    job.configs.push_back(parse_policy_spec(c));
    const PolicyConfig& cfg = job.configs.back().config;
    job.fixed_slots.push_back(is_supervised(cfg.kind)
                                  ? supervised_decisions(cfg, sweep, tune_contexts, leave_one_out)
                                  : std::vector<int>{});
  }
  if (s.charge_call_costs) job.call_cost_us = deployed_call_costs(job.configs);
  if (s.observation) job.observation_cost = observation_costs(sweep, *s.observation);
  return job;
}

ReplayBackend backend_of(const ReplaySettings& s) {
  return s.backend == "cuda" ? ReplayBackend::kCuda : ReplayBackend::kCpu;
}

// Final slots of each of `configs` configs from the engine's per-replay rows
// `cfg,"spec",context,seed,online,final,final_slot` (the spec is quoted and may hold commas, so the
// fields after it are taken after its closing quote): per config, per context of `contexts`.
std::vector<std::vector<int>> modal_final_slots(const std::string& raw, const Sweep& sweep,
                                                const std::vector<int>& contexts, size_t configs) {
  std::vector<std::vector<std::map<int, int>>> votes(
      configs, std::vector<std::map<int, int>>(size_t(sweep.num_contexts())));
  std::istringstream in(raw);
  std::string line;
  while (std::getline(in, line)) {
    const size_t q = line.rfind('"');
    if (q == std::string::npos || q + 2 > line.size())
      throw std::runtime_error("unexpected replay row: " + line);
    std::istringstream f(line.substr(q + 2));
    std::string context, seed, online, final_loss, slot;
    std::getline(f, context, ',');
    std::getline(f, seed, ',');
    std::getline(f, online, ',');
    std::getline(f, final_loss, ',');
    std::getline(f, slot, ',');
    ++votes.at(size_t(std::stoi(line.substr(0, line.find(',')))))
          .at(size_t(std::stoi(context)))[std::stoi(slot)];
  }
  std::vector<std::vector<int>> out(configs);
  for (size_t k = 0; k < configs; ++k)
    for (int c : contexts) {
      int best = -1, best_votes = 0;
      for (const auto& [slot, n] : votes[k][size_t(c)])  // map order: ties go to the lowest slot
        if (n > best_votes) best = slot, best_votes = n;
      out[k].push_back(best);
    }
  return out;
}

}  // namespace

std::vector<std::string> expand_policy_grid(const std::string& spec) {
  std::vector<std::string> out;
  for (const auto& p : parse_policy_grid(spec)) out.push_back(p.text);
  return out;
}

std::vector<ConfigLosses> tune_configs(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                       const std::vector<std::string>& configs, const ReplaySettings& s) {
  const ReplayJob job = make_job(sweep, tune_contexts, configs, tune_contexts, true, s);
  const ReplayResults r = run_replay(job, backend_for_job(backend_of(s), job, command_err()));
  std::vector<ConfigLosses> out;
  for (int i = 0; i < int(configs.size()); ++i)
    out.push_back({r.online_of(i), r.final_of(i), {}, r.watched_of(i)});
  return out;
}

std::vector<ConfigLosses> score_configs(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                        const std::vector<int>& score_contexts,
                                        const std::vector<std::string>& configs, const ReplaySettings& s,
                                        bool with_final_slots) {
  ReplayJob job = make_job(sweep, score_contexts, configs, tune_contexts, false, s);
  // The per-replay rows give the committed arms; both engines write the same rows, in the same
  // order (tests/gpu/cuda_engine_test.cpp).
  std::ostringstream raw;
  if (with_final_slots) job.raw = &raw;
  const ReplayResults r = run_replay(job, backend_for_job(backend_of(s), job, command_err()));
  std::vector<std::vector<int>> slots;
  if (with_final_slots) slots = modal_final_slots(raw.str(), sweep, score_contexts, configs.size());
  std::vector<ConfigLosses> out;
  for (int i = 0; i < int(configs.size()); ++i)
    out.push_back({r.online_of(i), r.final_of(i), with_final_slots ? slots[size_t(i)] : std::vector<int>{},
                   r.watched_of(i)});
  return out;
}

std::vector<std::vector<double>> loss_vs_horizon(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                                 const std::vector<int>& contexts,
                                                 const std::vector<std::string>& configs,
                                                 const ReplaySettings& s, const std::vector<int>& horizons,
                                                 int seeds) {
  ReplayJob job = make_job(sweep, contexts, configs, tune_contexts, false, s);
  job.seeds = seeds;
  const HorizonCurve curve = replay_horizon_curve(job, horizons);
  std::vector<std::vector<double>> out(configs.size());
  for (size_t c = 0; c < configs.size(); ++c)
    for (const auto& at_h : curve.online[c]) out[c].push_back(summarize_losses(at_h).mean);
  return out;
}

PromiseCheck check_promise(const Sweep& sweep, const std::vector<int>& tune_contexts,
                           const std::vector<int>& contexts, const std::string& config,
                           const ReplaySettings& s, int seeds, int horizon) {
  ReplayJob job = make_job(sweep, contexts, {config}, tune_contexts, false, s);
  const std::optional<ConservativeParams>& promise = job.configs.front().conservative;
  if (!promise) throw std::invalid_argument("check_promise: '" + config + "' is not run @conservative");
  job.seeds = seeds;
  job.horizon = horizon;
  const BudgetCheck b = check_budget(job, promise->alpha);
  PromiseCheck out;
  out.alpha = promise->alpha;
  out.contexts = int(contexts.size());
  out.seeds = seeds;
  out.horizon = horizon;
  out.replays_broken = b.replays_broken.front();
  out.seeds_broken = b.seeds_broken.front();
  out.first_break_call = b.first_break_call.front();
  return out;
}

std::string resolve_backend(const std::string& requested) {
  const ReplayBackend b = resolve_replay_backend(parse_replay_backend(requested), command_err());
  return std::string(replay_backend_name(b));
}

}  // namespace ncclbot::study
