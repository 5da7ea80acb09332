// `ncclbot replay`: replay the given policy configs (grids expand to every point) on a sweep over
// seeds and report, per config, the online and final loss metrics over contexts.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/replay_common.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/parallel_for.hpp"
#include "ncclbot/replay/supervised.hpp"

namespace ncclbot::cli {
namespace {

struct ReplayOptions {
  std::string sweep_path;
  std::vector<std::string> policies;
  int seeds = 1;
  uint64_t seed = 0;
  int horizon = 0;
  int threads = 0;
  std::string backend = "cpu";
  std::string nodes, collectives;
  std::string raw_path;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ReplayOptions>();
  app.add_option("--sweep", opt->sweep_path, "sweep CSV")->required();
  app.add_option("--policy", opt->policies, "policy spec, e.g. ucb1:c=0.1|0.2,n0=4 (repeatable)")->required();
  app.add_option("--seeds", opt->seeds, "replays per context and config (seeds seed .. seed+N-1)")
      ->required();
  app.add_option("--seed", opt->seed, "first seed (default 0)");
  app.add_option("--horizon", opt->horizon, "steps per replay (T)")->required();
  app.add_option("--threads", opt->threads, "worker threads (default: all cores)");
  app.add_option("--backend", opt->backend, "cpu, cuda or auto (default cpu)");
  app.add_option("--nodes", opt->nodes, "only these node counts, e.g. 16,32");
  app.add_option("--collectives", opt->collectives, "only these collectives, e.g. allreduce,allgather");
  app.add_option("--raw", opt->raw_path, "write one CSV row per replay to this file");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    const ReplayBackend backend = resolve_replay_backend(parse_replay_backend(opt->backend), std::cerr);
    ContextFilter filter;
    if (!opt->nodes.empty()) filter.nodes = parse_node_list(opt->nodes, "--nodes");
    if (!opt->collectives.empty())
      filter.collectives = parse_collective_list(opt->collectives, "--collectives");
    std::vector<PolicySpec> configs;
    for (const auto& text : opt->policies)
      for (auto& p : parse_policy_grid(text)) configs.push_back(std::move(p));
    if (opt->threads < 0) throw UsageError("--threads must be positive");

    const Sweep sweep = read_sweep_csv(opt->sweep_path);
    ReplayJob job;
    job.sweep = &sweep;
    job.contexts = filter.select(sweep);
    job.configs = configs;
    job.seeds = opt->seeds;
    job.seed_base = opt->seed;
    job.horizon = opt->horizon;
    job.threads = opt->threads > 0 ? opt->threads : default_thread_count();
    for (const PolicySpec& p : configs) {
      if (p.config.kind == PolicyKind::kAuto && !sweep.has_prior())
        throw InputError(opt->sweep_path, 0, "policy 'auto' needs a prior_us column");
      // No tune/score split here: supervised selectors are fit leave-one-out on the selected contexts.
      job.fixed_slots.push_back(is_supervised(p.config.kind)
                                    ? supervised_decisions(p.config, sweep, job.contexts, true)
                                    : std::vector<int>{});
    }
    std::ofstream raw;
    if (!opt->raw_path.empty()) {
      raw.open(opt->raw_path, std::ios::binary);
      if (!raw) throw UsageError("--raw: cannot write '" + opt->raw_path + "'");
      raw << "config,policy,context,seed,online_loss,final_loss,final_slot\n";
      job.raw = &raw;
    }
    const ReplayResults res = run_replay(job, backend);

    nlohmann::json out;
    out["backend"] = replay_backend_name(backend);
    out["contexts"] = job.contexts.size();
    out["seeds"] = job.seeds;
    out["horizon"] = job.horizon;
    out["configs"] = nlohmann::json::array();
    for (int c = 0; c < res.num_configs; ++c)
      out["configs"].push_back({{"policy", configs[size_t(c)].text},
                                {"online", loss_summary_json(summarize_losses(res.online_of(c)))},
                                {"final", loss_summary_json(summarize_losses(res.final_of(c)))}});
    std::ostream& human = opt->json ? std::cerr : std::cout;
    human << job.contexts.size() << " contexts x " << job.seeds << " seeds x T=" << job.horizon << " on "
          << replay_backend_name(backend) << "\n";
    for (const auto& c : out["configs"])
      human << std::left << std::setw(36) << c["policy"].get<std::string>() << " online mean "
            << std::setprecision(4) << c["online"]["mean"].get<double>() * 100 << "%  p99 "
            << c["online"]["p99"].get<double>() * 100 << "%  >10%: " << c["online"]["above_10pct"]
            << "   final mean " << c["final"]["mean"].get<double>() * 100 << "%\n";
    if (opt->json) std::cout << out.dump(2) << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"replay", "replay policies on a sweep; online and final loss per config", setup});

}  // namespace
}  // namespace ncclbot::cli
