#include "ncclbot/campaign/campaign_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "campaign/shell_snippets.hpp"
#include "campaign/slurm_array.hpp"
#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/campaign/knob_point.hpp"
#include "ncclbot/campaign/sweep_script.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/atomic_file.hpp"

namespace ncclbot::campaign {
namespace {

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";  // ids, names and paths here are [A-Za-z0-9._/-] only
}

template <typename T>
std::string joined_numbers(const std::vector<T>& v) {
  std::string out;
  for (const T& x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

// The buffer a run's chunk needs raised, as VAR=BYTES, or "-" (one word of the RUNS line).
std::string buffer_word(const PlannedRun& r) {
  if (r.knobs.chunk_bytes == 0) return "-";
  const auto b = buffer_for_chunk(r.collective, r.slot, r.knobs.chunk_bytes);
  return b ? b->var + "=" + std::to_string(b->bytes) : "-";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> chunk_tables(const Plan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  for (uint64_t chunk : plan.options.chunk_bytes) {
    if (chunk == 0) continue;
    std::vector<int> slots;
    for (const PlannedRun& r : plan.runs)
      if (r.knobs.chunk_bytes == chunk && std::find(slots.begin(), slots.end(), r.slot) == slots.end())
        slots.push_back(r.slot);
    std::sort(slots.begin(), slots.end());
    if (!slots.empty()) out.emplace_back(chunk_table_path(chunk), chunk_table(chunk, slots));
  }
  return out;
}

std::string json_log_path(const std::string& run_id) {
  return "logs/" + run_id + ".json";
}
std::string text_log_path(const std::string& run_id) {
  return "logs/" + run_id + ".log";
}

std::string campaign_toml(const Plan& plan) {
  const PlanOptions& o = plan.options;
  std::ostringstream os;
  os << "# Forced-arm nccl-tests campaign written by `ncclbot plan` (docs/campaign.md).\n"
     << "# `ncclbot ingest DIR` reads it; it is also an ingest manifest (--manifest campaign.toml).\n"
     << "[campaign]\nversion = 1\nfabric = " << quoted(plan.fabric)
     << "\ngpus_per_node = " << plan.gpus_per_node << "\nnodes = [";
  std::vector<int> nodes;
  for (const PlannedRun& r : plan.runs)
    if (std::find(nodes.begin(), nodes.end(), r.nodes) == nodes.end()) nodes.push_back(r.nodes);
  for (size_t i = 0; i < nodes.size(); ++i) os << (i ? ", " : "") << nodes[i];
  os << "]\ncollectives = [";
  for (size_t i = 0; i < o.collectives.size(); ++i)
    os << (i ? ", " : "") << quoted(collective_key(o.collectives[i]));
  os << "]\nmin_bytes = " << o.min_bytes << "\nmax_bytes = " << o.max_bytes
     << "\nstep_factor = " << o.step_factor << "\niters = " << o.iters << "\nwarmup = " << o.warmup
     << "\nlauncher = " << quoted(std::string(launcher_name(o.launcher))) << "\n";
  // Said from 2.31 on, where the runs force their arm per function, so that an earlier campaign's
  // manifest stays what it was.
  if (forces_per_function(o)) os << "nccl_version = " << quoted(o.nccl_version) << "\n";
  // Knob lists only when they ask for more than NCCL's own values, so an algorithm x protocol
  // campaign's manifest stays what it was.
  if (o.channels != std::vector<int>{0}) os << "channels = [" << joined_numbers(o.channels) << "]\n";
  if (o.chunk_bytes != std::vector<uint64_t>{0})
    os << "chunk_bytes = [" << joined_numbers(o.chunk_bytes) << "]\n";
  for (const PlannedRun& r : plan.runs) {
    os << "\n[[run]]\nid = " << quoted(r.id) << "\nfile = " << quoted(json_log_path(r.id))
       << "\nlog = " << quoted(text_log_path(r.id))
       << "\ncollective = " << quoted(collective_key(r.collective))
       << "\nalgo = " << quoted(std::string(algo_name(slot_algo(r.slot))))
       << "\nproto = " << quoted(std::string(proto_name(slot_proto(r.slot)))) << "\nnodes = " << r.nodes
       << "\ngpus_per_node = " << plan.gpus_per_node << "\nfabric = " << quoted(plan.fabric)
       << "\nmin_bytes = " << r.sizes.front() << "\n";
    if (r.knobs.channels > 0) os << "channels = " << r.knobs.channels << "\n";
    if (r.knobs.chunk_bytes > 0) os << "chunk_bytes = " << r.knobs.chunk_bytes << "\n";
  }
  return os.str();
}

std::string run_sh(const Plan& plan) {
  const PlanOptions& o = plan.options;
  std::ostringstream os;
  os << R"SH(#!/usr/bin/env bash
# Forced-arm nccl-tests campaign written by `ncclbot plan` (docs/campaign.md).
#   bash run.sh                      run every run whose log is missing or incomplete, in order
#   bash run.sh --task I             run the run at index I (each run.sbatch array task does this)
#   bash run.sh --incomplete [NODES] print the indices of the runs still to do (on NODES hosts)
#   bash run.sh --check-env          exit 2 when NCCL_CHUNK_SIZE is set anywhere NCCL reads it
# A run with a chunk size loads ncclbot's tuner plugin from $NCCLBOT_PLUGIN (NCCL 2.30.3 or later).
# nccl-tests is found in $NCCL_TESTS_DIR (default: on the PATH), the launcher in $SRUN or $MPIRUN
# (default srun / mpirun; extra launcher options may follow the name, e.g. SRUN="srun --mpi=pmix").
# A complete log is never rerun or overwritten; an incomplete one is moved to logs/attempts/ first.
set -uo pipefail
)SH" << kLocateHere;
  os << "LAUNCHER=" << launcher_name(o.launcher) << "\nGPUS_PER_NODE=" << plan.gpus_per_node
     << "\nITERS=" << o.iters << "\nWARMUP=" << o.warmup << "\nSTEP_FACTOR=" << o.step_factor
     << "\nMAX_BYTES=" << o.max_bytes << "\n# Written for NCCL " << o.nccl_version
     << (forces_per_function(o)
             ? ": NCCL_ALGO and NCCL_PROTO name each run's collective (from 2.31 a plain value "
               "leaves every other collective no algorithm)"
             : ": plain NCCL_ALGO and NCCL_PROTO values (nccl-tests runs one collective)")
     << "\n# id nodes program NCCL_ALGO NCCL_PROTO min_bytes channels chunk_bytes buffer (0: NCCL's "
        "own)\nRUNS=(\n";
  for (const PlannedRun& r : plan.runs) {
    const auto [algo, proto] = forced_values(o, r);
    os << "  \"" << r.id << ' ' << r.nodes << ' ' << test_binary(r.collective) << ' ' << algo << ' ' << proto
       << ' ' << r.sizes.front() << ' ' << r.knobs.channels << ' ' << r.knobs.chunk_bytes << ' '
       << buffer_word(r) << "\"\n";
  }
  os << R"SH()

# NCCL_CHUNK_SIZE is refused wherever NCCL would read it: the environment, then $NCCL_CONF_FILE (or
# ~/.nccl.conf) and /etc/nccl.conf (NCCL src/misc/param.cc initEnvFunc). NCCL does not clamp it and
# NVIDIA/nccl #2408 reports silently wrong results with it.
CHUNK_SIZE_REFUSAL="NCCL_CHUNK_SIZE is undocumented and unclamped, and NVIDIA/nccl #2408 reports silently wrong results with it; unset it (a campaign sets chunk sizes with plan --chunk-bytes)"
refuse_chunk_size() {
  local f hit
  if [[ -n "${NCCL_CHUNK_SIZE+set}" ]]; then
    echo "run.sh: NCCL_CHUNK_SIZE is set in the environment: $CHUNK_SIZE_REFUSAL" >&2
    exit 2
  fi
  for f in "${NCCL_CONF_FILE:-${HOME:+$HOME/.nccl.conf}}" /etc/nccl.conf; do
    [[ -n "$f" && -f "$f" && -r "$f" ]] || continue
    hit="$(grep -n -m 1 '^NCCL_CHUNK_SIZE=' -- "$f")" || continue
    echo "run.sh: $f:${hit%%:*}: sets NCCL_CHUNK_SIZE: $CHUNK_SIZE_REFUSAL" >&2
    exit 2
  done
}

# Complete: nccl-tests printed its closing line and no failure, and wrote a whole JSON document
# (one that parses, where python3 is there to say so; without it, one that ends in '}', and
# `ncclbot plan --status` then names a document that does not parse).
log_complete() {
  local log="$1" json="$2"
  [[ -s "$log" && -s "$json" ]] || return 1
  grep -q '^# Collective test concluded:' "$log" || return 1
  if grep -q 'Test NCCL failure\|Test CUDA failure\|Test failure' "$log"; then return 1; fi
  [[ "$(tr -d ' \t\r\n' < "$json" | tail -c 1)" == "}" ]] || return 1
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$json" >/dev/null 2>&1 || return 1
  fi
}

program() {
  if [[ -n "${NCCL_TESTS_DIR:-}" ]]; then echo "$NCCL_TESTS_DIR/$1"; else command -v "$1" || echo "$1"; fi
}

RUN_VARS=(NCCL_ALGO NCCL_PROTO)
)SH" << kLaunchFunction
     << R"SH(

# The knob point's environment (docs/campaign.md): channels through NCCL_MIN_CTAS = NCCL_MAX_CTAS,
# with NCCL's INIT lines on so the log says how many channels NCCL set up; a chunk size through
# ncclbot's tuner plugin in table mode ($NCCLBOT_PLUGIN), its protocol's buffer raised where needed.
knob_env() {  # CHANNELS CHUNK BUFFER: exports the variables and names them in RUN_VARS
  local channels="$1" chunk="$2" buffer="$3"
  RUN_VARS=(NCCL_ALGO NCCL_PROTO)
  if ((channels > 0)); then
    export NCCL_MIN_CTAS="$channels" NCCL_MAX_CTAS="$channels" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT
    RUN_VARS+=(NCCL_MIN_CTAS NCCL_MAX_CTAS NCCL_DEBUG NCCL_DEBUG_SUBSYS)
  fi
  if ((chunk > 0)); then
    export NCCL_TUNER_PLUGIN="$NCCLBOT_PLUGIN" NCCLBOT_MODE=table NCCLBOT_TABLE="$HERE/tables/chunk-$chunk.csv"
    RUN_VARS+=(NCCL_TUNER_PLUGIN NCCLBOT_MODE NCCLBOT_TABLE)
  fi
  if [[ "$buffer" != - ]]; then
    export "$buffer"
    RUN_VARS+=("${buffer%%=*}")
  fi
}

run_one() {
  local index="$1" id nodes prog algo proto min_bytes channels chunk buffer
  read -r id nodes prog algo proto min_bytes channels chunk buffer <<< "${RUNS[$index]}"
  local log="$HERE/logs/$id.log" json="$HERE/logs/$id.json" tag="[$((index + 1))/${#RUNS[@]}] $id"
  if log_complete "$log" "$json"; then
    echo "$tag: complete, kept"
    return 0
  fi
  if ((chunk > 0)) && [[ -z "${NCCLBOT_PLUGIN:-}" ]]; then
    echo "$tag: FAILED: a chunk size needs NCCLBOT_PLUGIN=/path/to/libnccl-tuner-ncclbot.so (NCCL 2.30.3 or later)"
    return 1
  fi
  mkdir -p "$HERE/logs/attempts"
  local stamp f
  stamp="$(date +%Y%m%dT%H%M%S).$$"
  for f in "$log" "$json" "$json".*; do
    if [[ -e "$f" ]]; then mv -- "$f" "$HERE/logs/attempts/$(basename -- "$f").$stamp"; fi
  done
  echo "$tag: running on $nodes node(s) x $GPUS_PER_NODE GPUs, NCCL_ALGO=$algo NCCL_PROTO=$proto"
  local start=$SECONDS rc
  (
    export NCCL_ALGO="$algo" NCCL_PROTO="$proto"
    knob_env "$channels" "$chunk" "$buffer"
    launch "$nodes" "$(program "$prog")" -b "$min_bytes" -e "$MAX_BYTES" -f "$STEP_FACTOR" -g 1 \
      -n "$ITERS" -w "$WARMUP" -c 1 -I 1 -J "$json"
  ) > "$log" 2>&1
  rc=$?
  if log_complete "$log" "$json"; then
    echo "$tag: done in $((SECONDS - start)) s"
    return 0
  fi
  echo "$tag: FAILED (exit $rc) after $((SECONDS - start)) s; see $log"
  return 1
}

case "${1:-}" in
  --check-env)
    refuse_chunk_size
    exit 0
    ;;
  --task)
    [[ "${2:-}" =~ ^[0-9]+$ && "$2" -lt ${#RUNS[@]} ]] || { echo "run.sh: --task needs an index below ${#RUNS[@]}" >&2; exit 2; }
    refuse_chunk_size
    run_one "$2"
    exit $?
    ;;
  --incomplete)
    for i in "${!RUNS[@]}"; do
      read -r id nodes _ <<< "${RUNS[$i]}"
      if [[ -n "${2:-}" && "$nodes" != "$2" ]]; then continue; fi
      log_complete "$HERE/logs/$id.log" "$HERE/logs/$id.json" || echo "$i"
    done
    exit 0
    ;;
  "") ;;
  *)
    echo "usage: run.sh [--task I | --incomplete [NODES] | --check-env]" >&2
    exit 2
    ;;
esac

refuse_chunk_size
mkdir -p "$HERE/logs"
)SH" << run_every("RUNS", "run.sh", "runs", "logs", "; next: ncclbot ingest $HERE");
  return os.str();
}

std::string run_sbatch(const Plan& plan) {
  SlurmArray a{"run.sh",
               "run.sbatch",
               "ncclbot-campaign",
               "(nodes, collective, arm)",
               "run",
               "logs",
               "bash \"$HERE/run.sh\" --check-env || exit 2\n",
               {}};
  for (const PlannedRun& r : plan.runs) a.seconds[r.nodes] = std::max(a.seconds[r.nodes], r.seconds);
  return slurm_array_script(plan, a);
}

void write_campaign_folder(const std::string& dir, const Plan& plan) {
  const std::string toml = campaign_toml(plan);
  std::error_code ec;
  const std::filesystem::path manifest = std::filesystem::path(dir) / kManifestName;
  if (std::filesystem::exists(manifest, ec)) {
    const auto old = read_file_if_exists(manifest.string());
    if (!old || *old != toml)
      throw UsageError("--out " + dir + " holds a different campaign (" + manifest.string() +
                       "): choose another folder, or remove it to start over");
  } else if (std::filesystem::exists(dir, ec) &&
             (!std::filesystem::is_directory(dir, ec) || !std::filesystem::is_empty(dir, ec))) {
    throw UsageError("--out " + dir + " exists and is not an empty folder or a campaign of this plan");
  }
  std::filesystem::create_directories(std::filesystem::path(dir) / "logs", ec);
  if (ec) throw UsageError("--out: cannot create " + dir + "/logs: " + ec.message());
  try {
    write_file_atomic(manifest.string(), toml);
    for (const auto& [name, text] : {std::pair<std::string, std::string>{"run.sh", run_sh(plan)},
                                     {"run.sbatch", run_sbatch(plan)},
                                     {"sweep.sh", sweep_sh(plan)},
                                     {"sweep.sbatch", sweep_sbatch(plan)}}) {
      if (text.empty()) continue;  // sweep.sh and sweep.sbatch: NCCL before 2.31
      const std::string path = (std::filesystem::path(dir) / name).string();
      write_file_atomic(path, text);
      ::chmod(path.c_str(), 0755);
    }
    const auto tables = chunk_tables(plan);
    if (!tables.empty()) std::filesystem::create_directories(std::filesystem::path(dir) / "tables");
    for (const auto& [name, text] : tables)
      write_file_atomic((std::filesystem::path(dir) / name).string(), text);
  } catch (const std::exception& e) {  // runtime_error, filesystem_error
    throw UsageError(std::string("--out: ") + e.what());
  }
}

}  // namespace ncclbot::campaign
