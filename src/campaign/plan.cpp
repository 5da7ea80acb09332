#include "ncclbot/campaign/plan.hpp"

#include <algorithm>
#include <cctype>

#include "ncclbot/campaign/arm_exclusion.hpp"
#include "ncclbot/campaign/knob_point.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/io/nccl_tests/forced_list.hpp"
#include "ncclbot/model/cost_model.hpp"

namespace ncclbot::campaign {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// All-gather and reduce-scatter count elements per rank rounded down to 16 bytes
// (nccl-tests' *GetCollByteCount), so a size prints as itself only when it is a multiple of
// 16 bytes per rank; below that the printed sizes collapse and would collide.
bool prints_as_itself(Collective c, uint64_t bytes, int ranks) {
  if (c != Collective::kAllGather && c != Collective::kReduceScatter) return bytes >= 4 && bytes % 4 == 0;
  return bytes % (16 * uint64_t(ranks)) == 0;
}

// nccl-tests' time per run: a warm-up of `warmup` calls at every power-of-two size from -b to -e,
// then per size and placement one synchronising call, `iters` timed calls and one data check.
// `call_us`: the model's time of one call at each of `sizes`.
double predicted_seconds(const model::Topology& t, Collective c, int slot, const std::vector<uint64_t>& sizes,
                         const std::vector<double>& call_us, const PlanOptions& o) {
  double us = 0.0;
  for (uint64_t b = sizes.front(); b <= sizes.back(); b *= 2)
    us += o.warmup * double(model::arm_time_us(t, c, slot_algo(slot), slot_proto(slot), b));
  for (double call : call_us) us += 2.0 * (o.iters + 2) * call;
  return us * 1e-6 + o.startup_s;
}

void check(const PlanOptions& o) {
  if (o.nodes.empty()) throw UsageError("--nodes: give at least one node count");
  for (int n : o.nodes)
    if (n < 1 || n > 100000) throw UsageError("--nodes: " + std::to_string(n) + " is not in [1, 100000]");
  if (o.collectives.empty()) throw UsageError("--collectives: give at least one collective");
  if (o.min_bytes < 1 || o.min_bytes > o.max_bytes || o.max_bytes > (uint64_t(1) << 40))
    throw UsageError("--min-bytes/--max-bytes: need 1 <= min <= max <= 1 TiB");
  if (o.step_factor < 2 || o.step_factor > 1024) throw UsageError("--step-factor: must be in [2, 1024]");
  if (o.iters < 1 || o.iters > 100000) throw UsageError("--iters: must be in [1, 100000]");
  if (o.warmup < 0 || o.warmup > 100000) throw UsageError("--warmup: must be in [0, 100000]");
  if (!(o.startup_s >= 0.0) || o.startup_s > 86400.0) throw UsageError("--startup-s: must be in [0, 86400]");
  if (o.channels.empty()) throw UsageError("--channels: give at least one channel count (0: NCCL's own)");
  if (o.chunk_bytes.empty()) throw UsageError("--chunk-bytes: give at least one chunk size (0: NCCL's own)");
  for (int ch : o.channels)
    if (ch < 0 || ch > kMaxChannels)
      throw UsageError("--channels: " + std::to_string(ch) +
                       " is not in [0, 64] (0: NCCL's own count; 64 is NCCL's MAXCHANNELS)");
  for (uint64_t chunk : o.chunk_bytes)
    if (chunk > kMaxChunkBytes)
      throw UsageError("--chunk-bytes: " + std::to_string(chunk) + " is above 1 GiB");
}

// A chunk size must fit the grain of at least one protocol the plan considers; one that fits none
// would plan nothing (a typo, most likely).
void check_chunks_fit(const std::vector<uint64_t>& chunks, const std::vector<int>& slots) {
  for (uint64_t chunk : chunks) {
    if (chunk == 0) continue;
    bool fits = false;
    for (int slot : slots) fits = fits || chunk_fits_grain(chunk, int(slot_proto(slot)));
    if (!fits)
      throw UsageError("--chunk-bytes: " + std::to_string(chunk) +
                       " is not a positive multiple of any planned protocol's grain (LL 16, LL128 1920, "
                       "Simple 512 B)");
  }
}

template <typename T>
std::vector<T> sorted_unique(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The runs of one arm, one per knob point, or the reason NCCL cannot run the arm at all; chunk
// sizes off the arm's grain (or needing too large a buffer) are left out one by one.
void plan_arm(Plan& plan, const model::Topology& t, int n, Collective c, int slot,
              const std::vector<uint64_t>& sizes) {
  const PlanOptions& o = plan.options;
  std::optional<std::string> why;
  for (uint64_t b : sizes)
    if ((why = why_arm_left_out(t, c, slot, b))) break;
  if (why) {
    plan.left_out.push_back({n, c, slot, 0, *why});
    return;
  }
  const std::string arm_id = "n" + std::to_string(n) + "-" + collective_key(c) + "-" +
                             lower(algo_name(slot_algo(slot))) + "-" + lower(proto_name(slot_proto(slot)));
  std::vector<double> call_us;  // the model has no knob terms
  for (uint64_t b : sizes)
    call_us.push_back(double(model::arm_time_us(t, c, slot_algo(slot), slot_proto(slot), b)));
  const double seconds = predicted_seconds(t, c, slot, sizes, call_us, o);
  for (uint64_t chunk : o.chunk_bytes) {
    if (chunk > 0 && (why = why_chunk_left_out(c, slot, chunk))) {
      plan.left_out.push_back({n, c, slot, chunk, *why});
      continue;
    }
    for (int channels : o.channels) {
      const KnobPoint knobs{channels, chunk};
      plan.runs.push_back({arm_id + knob_id_suffix(knobs), n, c, slot, knobs, sizes, seconds, call_us});
    }
  }
}

}  // namespace

std::string test_binary(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce_perf";
    case Collective::kAllGather:
      return "all_gather_perf";
    case Collective::kReduceScatter:
      return "reduce_scatter_perf";
    case Collective::kBroadcast:
      return "broadcast_perf";
    case Collective::kReduce:
      return "reduce_perf";
    default:
      break;
  }
  throw UsageError("collective " + std::string(collective_name(c)) + " has no forced-arm nccl-tests run");
}

std::string collective_key(Collective c) {
  return lower(collective_name(c));
}

std::string_view launcher_name(Launcher l) {
  return l == Launcher::kSrun ? "srun" : "mpirun";
}

Launcher parse_launcher(std::string_view s) {
  if (s == "srun") return Launcher::kSrun;
  if (s == "mpirun") return Launcher::kMpirun;
  throw UsageError("--launcher: '" + std::string(s) + "' is not one of srun, mpirun");
}

Plan make_plan(const sim::FabricPreset& f, const PlanOptions& o) {
  check(o);
  Plan plan;
  plan.fabric = f.name;
  plan.options = o;
  plan.gpus_per_node = o.gpus_per_node > 0 ? o.gpus_per_node : f.gpus_per_host;
  const std::vector<int> nodes = sorted_unique(o.nodes);
  plan.options.channels = sorted_unique(o.channels);
  plan.options.chunk_bytes = sorted_unique(o.chunk_bytes);
  // Each collective once, in the order given: a repeated one would be planned, priced and run twice
  // (its runs sharing log files).
  std::vector<Collective> collectives;
  for (Collective c : o.collectives)
    if (std::find(collectives.begin(), collectives.end(), c) == collectives.end()) collectives.push_back(c);
  plan.options.collectives = collectives;
  std::vector<int> slots = o.arms;
  if (slots.empty())
    for (int s = 0; s < kNumNcclArms; ++s) slots.push_back(s);
  check_chunks_fit(plan.options.chunk_bytes, slots);
  for (int n : nodes) {
    const model::Topology t = sim::topology_for(f, n, plan.gpus_per_node);  // UsageError on a bad shape
    const int ranks = n * plan.gpus_per_node;
    if (ranks < 2) throw UsageError("--nodes/--gpus-per-node: a run needs at least 2 ranks");
    for (Collective c : collectives) {
      test_binary(c);  // a collective nccl-tests can run
      std::vector<uint64_t> sizes;
      uint64_t first_skipped = 0, last_skipped = 0;
      for (uint64_t b = o.min_bytes; b <= o.max_bytes; b *= o.step_factor) {
        // nccl-tests steps from -b by the factor; a run that starts at a size it would round
        // differently starts at the first size it prints as itself.
        if (sizes.empty() && !prints_as_itself(c, b, ranks)) {
          if (!first_skipped) first_skipped = b;
          last_skipped = b;
        } else {
          sizes.push_back(b);  // a multiple of the first: prints as itself too
        }
        if (b > o.max_bytes / o.step_factor) break;
      }
      if (first_skipped)
        plan.left_out.push_back(
            {n, c, -1, 0,
             "sizes " + std::to_string(first_skipped) + ".." + std::to_string(last_skipped) +
                 " B: nccl-tests rounds " + collective_key(c) + " to whole multiples of " +
                 std::to_string(c == Collective::kAllGather || c == Collective::kReduceScatter ? 16 * ranks
                                                                                               : 4) +
                 " B at " + std::to_string(ranks) + " ranks"});
      if (sizes.empty()) continue;
      for (int slot : slots) plan_arm(plan, t, n, c, slot, sizes);
    }
  }
  if (plan.runs.empty()) throw UsageError("the plan has no run: every arm or size was left out (see above)");
  return plan;
}

Cost sweep_cost_of(const Plan& plan, int nodes) {
  const PlanOptions& o = plan.options;
  const double rounds = 1.0 + o.warmup + o.iters;
  Cost c;
  std::vector<int> node_counts;
  for (const PlannedRun& r : plan.runs)
    if ((nodes == 0 || r.nodes == nodes) &&
        std::find(node_counts.begin(), node_counts.end(), r.nodes) == node_counts.end())
      node_counts.push_back(r.nodes);
  for (int n : node_counts) {
    double seconds = 0.0;
    for (Collective coll : o.collectives) {
      std::vector<double> fastest;  // per size: NCCL's own call, priced as the fastest planned arm's
      for (const PlannedRun& r : plan.runs) {
        if (r.nodes != n || r.collective != coll) continue;
        if (r.knobs.chunk_bytes > 0) {  // no per-call chunk size: still an nccl-tests run
          ++c.runs;
          c.seconds += r.seconds;
          c.gpu_hours += r.seconds * r.nodes * plan.gpus_per_node / 3600.0;
          continue;
        }
        if (fastest.empty()) {
          fastest = r.call_us;
          seconds += o.startup_s;  // one launch and one communicator for every arm of this collective
        }
        for (size_t i = 0; i < r.call_us.size(); ++i) {
          seconds += rounds * r.call_us[i] * 1e-6;
          fastest[i] = std::min(fastest[i], r.call_us[i]);
        }
      }
      for (double us : fastest) seconds += rounds * us * 1e-6;
    }
    c.seconds += seconds;
    c.gpu_hours += seconds * n * plan.gpus_per_node / 3600.0;
  }
  return c;
}

Cost cost_of(const Plan& plan, int nodes) {
  Cost c;
  for (const PlannedRun& r : plan.runs) {
    if (nodes != 0 && r.nodes != nodes) continue;
    ++c.runs;
    c.seconds += r.seconds;
    c.gpu_hours += r.seconds * r.nodes * plan.gpus_per_node / 3600.0;
  }
  return c;
}

bool forces_per_function(const PlanOptions& options) {
  return nccl_version_at_least(options.nccl_version, 2, 31);
}

std::pair<std::string, std::string> forced_values(const PlanOptions& options, const PlannedRun& run) {
  const std::string algo(algo_name(slot_algo(run.slot))), proto(proto_name(slot_proto(run.slot)));
  if (!forces_per_function(options)) return {algo, proto};
  return {nccl_tests::per_function_value(run.collective, algo),
          nccl_tests::per_function_value(run.collective, proto)};
}

}  // namespace ncclbot::campaign
