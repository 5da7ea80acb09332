#include "ncclbot/campaign/sweep_script.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "campaign/shell_snippets.hpp"
#include "campaign/slurm_array.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::campaign {
namespace {

template <typename T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

template <typename T>
std::string comma_joined(const std::vector<T>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

}  // namespace

std::string sweep_launch_name(int nodes, Collective collective) {
  return "n" + std::to_string(nodes) + "-" + collective_key(collective);
}

std::vector<SweepLaunch> sweep_launches(const Plan& plan) {
  std::vector<SweepLaunch> out;
  if (!forces_per_function(plan.options)) return out;
  for (const PlannedRun& r : plan.runs) {  // by nodes, then collective: the launches' order
    if (r.knobs.chunk_bytes > 0) continue;
    if (out.empty() || out.back().nodes != r.nodes || out.back().collective != r.collective) {
      SweepLaunch l;
      l.nodes = r.nodes;
      l.collective = r.collective;
      l.sizes = r.sizes;
      l.name = sweep_launch_name(r.nodes, r.collective);
      out.push_back(std::move(l));
    }
    SweepLaunch& l = out.back();
    add_once(l.algos, std::string(algo_name(slot_algo(r.slot))));
    add_once(l.protos, std::string(proto_name(slot_proto(r.slot))));
    add_once(l.channels, int(r.knobs.channels));
  }
  for (SweepLaunch& l : out) std::sort(l.channels.begin(), l.channels.end());
  return out;
}

std::vector<SweepLaunchStatus> sweep_status(const Campaign& campaign) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<SweepLaunchStatus> out;
  if (!fs::exists(fs::path(campaign.dir) / "sweep.sh", ec)) return out;
  std::vector<std::string> names;  // the launches sweep_launches() makes, in the manifest's order
  for (const CampaignRun& r : campaign.runs)
    if (r.knobs.chunk_bytes == 0) add_once(names, sweep_launch_name(r.nodes, r.collective));
  for (const std::string& name : names) {
    const fs::path base = fs::path(campaign.dir) / "sweeps" / name;
    SweepLaunchStatus s{name, RunState::kMissing, "not run yet"};
    if (fs::exists(base.string() + ".done", ec)) {
      s = {name, RunState::kDone, ""};
    } else if (fs::exists(base.string() + ".log", ec)) {
      s = {name, RunState::kFailed,
           "no sweeps/" + name + ".done: it ended badly or is still running (see sweeps/" + name + ".log)"};
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string sweep_sbatch(const Plan& plan) {
  const std::vector<SweepLaunch> launches = sweep_launches(plan);
  if (launches.empty()) return "";
  SlurmArray a{"sweep.sh",
               "sweep.sbatch",
               "ncclbot-sweep",
               "(nodes, collective) launch of ncclbot-sweep",
               "sweep",
               "sweeps",
               "",
               {}};
  // A launch's time: its node count's whole estimate (sweep_cost_of), a bound on any one launch.
  for (const SweepLaunch& l : launches)
    if (!a.seconds.contains(l.nodes)) a.seconds[l.nodes] = sweep_cost_of(plan, l.nodes).seconds;
  return slurm_array_script(plan, a);
}

std::string sweep_sh(const Plan& plan) {
  const std::vector<SweepLaunch> launches = sweep_launches(plan);
  if (launches.empty()) return "";
  const PlanOptions& o = plan.options;
  std::ostringstream os;
  os << R"SH(#!/usr/bin/env bash
# The campaign's forced arms timed by ncclbot-sweep, written by `ncclbot plan` for NCCL >= 2.31
# (docs/campaign.md "Forced arms per call"): one launch per node count and collective, every
# algorithm x protocol x channel count of it called in turn in one process per GPU, in an order
# drawn anew every round. Runs with a chunk size are not here: run.sh times them.
#   bash sweep.sh                     run every launch whose sweep is not complete, in order
#   bash sweep.sh --task I            run launch I alone (each sweep.sbatch array task does this)
#   bash sweep.sh --incomplete [NODES] print the indices of the launches still to do (on NODES hosts)
# ncclbot-sweep is $NCCLBOT_SWEEP (default: on the PATH), the launcher $SRUN or $MPIRUN (default
# srun / mpirun). A launch writes sweeps/NAME.csv with its side files and, when it ends well,
# sweeps/NAME.done; a complete sweep is never rerun, an incomplete one is moved to sweeps/attempts/.
set -uo pipefail
)SH" << kLocateHere;
  os << "LAUNCHER=" << launcher_name(o.launcher) << "\nGPUS_PER_NODE=" << plan.gpus_per_node
     << "\nITERS=" << o.iters << "\nWARMUP=" << o.warmup << "\nFABRIC=" << plan.fabric
     << "\n# nodes collective bytes algorithms protocols channels name\nSWEEPS=(\n";
  for (const SweepLaunch& l : launches)
    os << "  \"" << l.nodes << ' ' << collective_key(l.collective) << ' ' << comma_joined(l.sizes) << ' '
       << comma_joined(l.algos) << ' ' << comma_joined(l.protos) << ' ' << comma_joined(l.channels) << ' '
       << l.name << "\"\n";
  os << ")\nRUN_VARS=()\n"
     << kLaunchFunction << R"SH(
sweep_program() {
  command -v "${NCCLBOT_SWEEP:-ncclbot-sweep}" || echo "${NCCLBOT_SWEEP:-ncclbot-sweep}"
}

run_one() {
  local index="$1" nodes coll bytes algos protos channels name
  read -r nodes coll bytes algos protos channels name <<< "${SWEEPS[$index]}"
  local out="$HERE/sweeps/$name" tag="[$((index + 1))/${#SWEEPS[@]}] $name"
  if [[ -e "$out.done" ]]; then
    echo "$tag: complete, kept"
    return 0
  fi
  local stamp f
  stamp="$(date +%Y%m%dT%H%M%S).$$"
  for f in "$out".*; do
    [[ -e "$f" ]] || continue
    mkdir -p "$HERE/sweeps/attempts"
    mv -- "$f" "$HERE/sweeps/attempts/$(basename -- "$f").$stamp"
  done
  echo "$tag: running on $nodes node(s) x $GPUS_PER_NODE GPUs"
  local start=$SECONDS rc
  launch "$nodes" "$(sweep_program)" --collectives "$coll" --bytes "$bytes" --algos "$algos" --protos "$protos" \
    --channels "$channels" --iterations "$ITERS" --warmup "$WARMUP" --seed 1 --fabric "$FABRIC" \
    --out "$out.csv" > "$out.log" 2>&1
  rc=$?
  if ((rc == 0)); then
    touch "$out.done"
    echo "$tag: done in $((SECONDS - start)) s"
    return 0
  fi
  echo "$tag: FAILED (exit $rc) after $((SECONDS - start)) s; see $out.log (the contexts it finished are in $out.csv)"
  return 1
}

case "${1:-}" in
  --task)
    [[ "${2:-}" =~ ^[0-9]+$ && "$2" -lt ${#SWEEPS[@]} ]] || { echo "sweep.sh: --task needs an index below ${#SWEEPS[@]}" >&2; exit 2; }
    mkdir -p "$HERE/sweeps"
    run_one "$2"
    exit $?
    ;;
  --incomplete)
    for i in "${!SWEEPS[@]}"; do
      read -r nodes _ _ _ _ _ name <<< "${SWEEPS[$i]}"
      if [[ -n "${2:-}" && "$nodes" != "$2" ]]; then continue; fi
      [[ -e "$HERE/sweeps/$name.done" ]] || echo "$i"
    done
    exit 0
    ;;
  "") ;;
  *)
    echo "usage: sweep.sh [--task I | --incomplete [NODES]]" >&2
    exit 2
    ;;
esac

mkdir -p "$HERE/sweeps"
)SH"
     << run_every("SWEEPS", "sweep.sh", "sweeps", "sweeps",
                  ": $HERE/sweeps/*.csv (replay, inspect and studies read each)");
  return os.str();
}

}  // namespace ncclbot::campaign
