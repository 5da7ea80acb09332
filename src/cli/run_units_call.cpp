#include "cli/run_units_call.hpp"

#include <algorithm>

#include "cli/scale_cli.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "study/policy_replay.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::cli {

void check_run_units_call(const RunUnitsCallOptions& o) {
  if (o.threads < 0) throw UsageError("--threads must be positive");
  if (!o.backend.empty() && o.backend != "cpu" && o.backend != "cuda" && o.backend != "auto")
    throw UsageError("--backend must be cpu, cuda or auto");
}

ComputedUnits compute_study_units(const RunUnitsCallOptions& o, ShardSpec mine, ProcessGroup* group,
                                  bool self_write) {
  study::StudySpec spec = study::load_study(o.study);
  if (!o.backend.empty()) spec.backend = o.backend;
  const bool root = !group || group->rank() == 0;
  if (root) command_err() << "ncclbot run-units: preparing " << o.study << "\n";
  ComputedUnits c{study::prepare_study(std::move(spec)), {}, std::filesystem::path(o.out_dir) / "units", {}};
  c.engine.backend = study::resolve_backend(c.prepared.spec.backend);
  c.engine.threads =
      o.threads > 0 ? o.threads : std::max(1, default_thread_count() / (group ? group->local_size() : 1));
  study::prepare_units_folder(o.out_dir, c.prepared, o.replace, self_write, root);
  c.done = study::compute_shard_units(c.prepared, c.engine, mine, c.units_dir, self_write, group);
  return c;
}

RunUnitsCallResult run_units_call(const RunUnitsCallOptions& o, const std::string& shard_text) {
  const ShardSpec shard = parse_shard(shard_text);
  check_run_units_call(o);
  const ComputedUnits c = compute_study_units(o, shard, nullptr, true);
  return {shard, c.prepared.units.size(), c.done.computed, c.done.reused};
}

nlohmann::json run_units_document(const RunUnitsCallResult& r) {
  return {{"shard", {{"index", r.shard.index}, {"count", r.shard.count}}},
          {"units", r.units},
          {"computed", r.computed},
          {"reused", r.reused}};
}

}  // namespace ncclbot::cli
