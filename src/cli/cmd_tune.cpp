// `ncclbot tune`: grid search on the tune contexts, freeze the best point of every policy, score
// it on the score contexts. Under mpirun (ncclbot-mpi) both replay phases are split across the
// ranks and rank 0 prints the same output as one process (docs/scale-out.md).
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/replay_common.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/parallel_for.hpp"
#include "ncclbot/replay/tune.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/replay_on_ranks.hpp"
#include "ncclbot/scale/replay_partial.hpp"
#include "study/atomic_file.hpp"
#include "study/sha256.hpp"

namespace ncclbot::cli {
namespace {

struct TuneOptions {
  std::string sweep_path;
  std::vector<std::string> policies;
  std::string tune_nodes = "4,8", score_nodes = "16,32", collectives;
  std::string objective = "mean";
  int seeds = 1;
  uint64_t seed = 0;
  int horizon = 0;
  int threads = 0;
  std::string backend = "cpu";
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<TuneOptions>();
  app.add_option("--sweep", opt->sweep_path, "sweep CSV")->required();
  app.add_option("--policy", opt->policies, "policy grid, e.g. ucb1:c=0.05|0.1|0.2,n0=0|4|16 (repeatable)")
      ->required();
  app.add_option("--tune-nodes", opt->tune_nodes, "node counts of the tune contexts (default 4,8)");
  app.add_option("--score-nodes", opt->score_nodes, "node counts of the score contexts (default 16,32)");
  app.add_option("--collectives", opt->collectives, "only these collectives");
  app.add_option("--objective", opt->objective, "mean, p99 or above_10pct of the online loss (default mean)");
  app.add_option("--seeds", opt->seeds, "replays per context and config")->required();
  app.add_option("--seed", opt->seed, "first seed (default 0)");
  app.add_option("--horizon", opt->horizon, "steps per replay (T)")->required();
  app.add_option("--threads", opt->threads, "worker threads (default: all cores)");
  app.add_option("--backend", opt->backend, "cpu, cuda or auto (default cpu)");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    TuneRequest req;
    req.backend = resolve_replay_backend(parse_replay_backend(opt->backend), std::cerr);
    req.objective = parse_tune_objective(opt->objective);
    ContextFilter tune_filter, score_filter;
    tune_filter.nodes = parse_node_list(opt->tune_nodes, "--tune-nodes");
    score_filter.nodes = parse_node_list(opt->score_nodes, "--score-nodes");
    if (!opt->collectives.empty())
      tune_filter.collectives = score_filter.collectives =
          parse_collective_list(opt->collectives, "--collectives");
    for (const auto& g : opt->policies) parse_policy_grid(g);  // usage errors before reading the sweep
    if (opt->threads < 0) throw UsageError("--threads must be positive");
    const Sweep sweep = read_sweep_csv(opt->sweep_path);
    req.sweep = &sweep;
    req.grids = opt->policies;
    req.tune_contexts = tune_filter.select(sweep);
    req.score_contexts = score_filter.select(sweep);
    req.seeds = opt->seeds;
    req.seed_base = opt->seed;
    req.horizon = opt->horizon;
    ProcessGroup* group = process_group();
    if (group && group->size() == 1) group = nullptr;
    // Ranks on one node share its cores unless told otherwise.
    req.threads = opt->threads > 0 ? opt->threads
                                   : std::max(1, default_thread_count() / (group ? group->local_size() : 1));
    if (group) {
      const auto bytes = study::read_file_if_exists(opt->sweep_path);
      if (!bytes) throw InputError(opt->sweep_path, 0, "cannot read the sweep");
      const std::string digest = study::sha256_hex(*bytes);
      req.engine = [group, digest, backend = req.backend](const ReplayJob& job) {
        nlohmann::json identity = replay_identity(job, digest, replay_backend_name(backend));
        identity["command"] = "tune";
        return run_replay_on_ranks(*group, job, backend, identity);
      };
    }
    const auto tuned = tune_and_score(req);
    if (group && group->rank() != 0) return 0;

    nlohmann::json out;
    out["backend"] = replay_backend_name(req.backend);
    out["objective"] = tune_objective_name(req.objective);
    out["tune_contexts"] = req.tune_contexts.size();
    out["score_contexts"] = req.score_contexts.size();
    out["seeds"] = req.seeds;
    out["horizon"] = req.horizon;
    out["policies"] = nlohmann::json::array();
    for (const auto& tp : tuned) {
      nlohmann::json grid = nlohmann::json::array();
      for (size_t i = 0; i < tp.points.size(); ++i)
        grid.push_back({{"policy", tp.points[i].text}, {"objective", tp.objective[i]}});
      out["policies"].push_back(
          {{"grid", tp.grid},
           {"grid_size", tp.points.size()},
           {"tuned", tp.points[size_t(tp.chosen)].text},
           {"grid_points", grid},
           {"tune", {{"online", metrics_json(tp.tune_online)}, {"final", metrics_json(tp.tune_final)}}},
           {"score", {{"online", metrics_json(tp.score_online)}, {"final", metrics_json(tp.score_final)}}}});
    }
    std::ostream& human = opt->json ? std::cerr : std::cout;
    human << "tuned on " << req.tune_contexts.size() << " contexts (nodes " << opt->tune_nodes
          << "), scored on " << req.score_contexts.size() << " (nodes " << opt->score_nodes << "), "
          << req.seeds << " seeds, T=" << req.horizon << ", objective " << tune_objective_name(req.objective)
          << "\n";
    for (const auto& tp : tuned)
      human << std::left << std::setw(40) << tp.points[size_t(tp.chosen)].text << std::setprecision(4)
            << " tune online mean " << tp.tune_online.summary.mean * 100 << "%   score online mean "
            << tp.score_online.summary.mean * 100 << "% (sd over seeds " << tp.score_online.mean.sd * 100
            << ")  p99 " << tp.score_online.summary.p99 * 100
            << "%  >10%: " << tp.score_online.summary.above_10pct << "\n";
    if (opt->json) std::cout << out.dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"tune", "grid search on tune contexts, score the frozen best on score contexts", setup});

}  // namespace
}  // namespace ncclbot::cli
