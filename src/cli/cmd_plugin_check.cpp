// `ncclbot plugin-check --plugin PATH --sweep S --policy SPEC --seed N [--horizon T]`: loads the
// built tuner plugin as NCCL does (dlopen RTLD_NOW | RTLD_LOCAL, the versioned v5 structs) and
// checks that, driven with the sweep, it makes the replay engine's decisions call for call:
//   for every context: one communicator (tuner + profiler init), then T calls of
//     cost table = the sweep's prior on the measured arms, -1 elsewhere (NCCL's layout) ->
//     getCollInfo -> the pick by NCCL's rule (smallest non-negative, strict <, row-major) ->
//     compare with the replay's step t -> latency of the picked arm drawn from the sweep with the
//     replay's Philox keying -> fed back through profiler events (Coll + KernelCh with GPU
//     timestamps), or through ncclbotReportLatency when nanosecond timestamps cannot carry it exactly.
// Exit 0 only when every decision is equal; 1 when any differs (each printed with context and step).
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli/command.hpp"
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"

namespace ncclbot::cli {
namespace plugin_check_command {

struct PluginCheckOptions {
  std::string plugin_path, sweep_path, policy;
  uint64_t seed = 0;
  int horizon = 200;
  int delay = 0;
  std::string nodes, collectives, feed = "auto";
  int max_reports = 20;
  std::string log_path;
  bool json = false;
};

struct LoadedPlugin {
  void* handle = nullptr;
  const NcclTunerV5* tuner = nullptr;
  const NcclProfilerV5* profiler = nullptr;
  ncclbotReportLatency_t report = nullptr;
};

LoadedPlugin load_plugin(const std::string& path) {
  LoadedPlugin p;
  p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle) throw UsageError("--plugin: cannot load '" + path + "': " + dlerror());
  p.tuner = static_cast<const NcclTunerV5*>(dlsym(p.handle, "ncclTunerPlugin_v5"));
  p.profiler = static_cast<const NcclProfilerV5*>(dlsym(p.handle, "ncclProfiler_v5"));
  p.report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(p.handle, "ncclbotReportLatency"));
  if (!p.tuner || !p.tuner->init || !p.tuner->getCollInfo || !p.tuner->finalize)
    throw UsageError("--plugin: '" + path + "' exports no usable ncclTunerPlugin_v5");
  if (!p.profiler)
    throw UsageError("--plugin: '" + path + "' exports no ncclProfiler_v5 (the feedback path)");
  return p;
}

// The replay's draw of step t (replay/replay.hpp): word t of the (seed, stream id) Philox stream
// picks one of the arm's R samples.
float replay_draw(const SweepView& v, int c, int slot, uint64_t seed, uint64_t stream_id, int t) {
  const Philox4x32 block =
      philox4x32_10(Philox4x32{{uint32_t(t) >> 2, 0u, uint32_t(stream_id), uint32_t(stream_id >> 32)}},
                    uint32_t(seed), uint32_t(seed >> 32));
  const uint32_t r = uniform_below(block.v[t & 3], uint32_t(v.samples));
  return v.sample(c, slot, int(r));
}

// Names as NCCL's profiler spells them.
const char* profiler_func_name(Collective c) {
  switch (c) {
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    default:
      return "AllReduce";
  }
}

struct Mismatch {
  int context = 0, step = 0, plugin_slot = -1, replay_slot = -1;
};

struct ContextOutcome {
  bool checked = false;
  std::string skipped;  // why, when not checked
  int steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
  std::vector<Mismatch> mismatches;
};

std::string slot_label(int slot) {
  if (slot < 0) return "none";
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
}

ContextOutcome check_context(const LoadedPlugin& plugin, const Sweep& sweep, int c, const PolicySpec& spec,
                             const PluginCheckOptions& opt, const std::string& feed) {
  ContextOutcome out;
  const SweepView v = sweep.view();
  const Context& ctx = sweep.context(c);
  const ArmMask mask = v.mask(c);
  // NCCL's cost table: the model's time on every arm it could run, -1 on the others. An arm that
  // was measured but has no prediction cannot be expressed in a cost table.
  if (mask.nccl_arms() != mask) {
    // A simulated arm (HiPIPE) has no row in NCCL's table: the replay could pick what the plugin
    // cannot, so there is nothing to compare call for call.
    out.skipped = "the sweep has the simulated HiPIPE arm, which NCCL's cost table cannot hold";
    return out;
  }
  float table[kNumNcclAlgos][kNumProtos];
  for (int s = 0; s < kNumNcclArms; ++s) {
    const float p = v.prior(c, s);
    if (mask.has(s) && !(p >= 0.0f && std::isfinite(p))) {
      out.skipped = "arm " + slot_label(s) + " was measured but has no prior_us";
      return out;
    }
    table[s / kNumProtos][s % kNumProtos] = mask.has(s) ? p : -1.0f;
  }
  const int ranks = ctx.nodes * ctx.gpus_per_node;
  const bool per_rank_count =
      ctx.collective == Collective::kAllGather || ctx.collective == Collective::kReduceScatter;
  const bool bytes_fit_descriptor = !per_rank_count || ctx.bytes % uint64_t(ranks) == 0;

  // The reference: the replay engine's own steps (replay_one, the code the CPU engine runs).
  ReplayTask task;
  task.sweep = v;
  task.context = c;
  task.seed = opt.seed;
  task.stream_id = context_stream_id(ctx);
  task.horizon = opt.horizon;
  task.delay = opt.delay;
  std::vector<int> replay_slots(size_t(opt.horizon), -1);
  std::vector<float> replay_latency(size_t(opt.horizon), 0.0f);
  visit_policy(spec.config, [&](auto& policy) {
    replay_one(policy, task, [&](int t, int slot, float x) {
      replay_slots[size_t(t)] = slot;
      replay_latency[size_t(t)] = x;
    });
    return 0;
  });

  // One communicator per context, with an id of its own; the profiler is initialised first, as
  // NCCL does.
  const uint64_t comm_id = 0x6e63636c62000000ull + uint64_t(c);
  void* prof = nullptr;
  void* tuner = nullptr;
  int mask_bits = 0;
  plugin.profiler->init(&prof, comm_id, &mask_bits, "plugin-check", ctx.nodes, ranks, 0, nullptr);
  plugin.tuner->init(&tuner, comm_id, size_t(ranks), size_t(ctx.nodes), nullptr, nullptr, nullptr);
  out.checked = true;
  uint64_t clock_ns = 1000000;
  // A call's latency goes back to the plugin as NCCL's profiler would deliver it, `delay` calls
  // late: after call t + D is decided and before call t + D + 1 (replay/replay.hpp).
  auto report_latency = [&](int t, int pick, float x) {
    const long long ns = std::llround(double(x) * 1000.0);
    const bool exact_in_ns = ns > 0 && float(double(ns) / 1000.0) == x;
    const bool use_profiler = feed == "profiler" || (feed == "auto" && exact_in_ns && bytes_fit_descriptor);
    if (use_profiler) {
      // Coll event (count per rank, int8 so count = bytes), stopped when "enqueued", then two
      // kernel channels; the slower one spans the drawn latency.
      NcclProfilerEventDescrV5 d;
      std::memset(&d, 0, sizeof d);
      d.type = kNcclProfileColl;
      d.rank = 0;
      d.coll.seqNumber = uint64_t(t);
      d.coll.func = profiler_func_name(ctx.collective);
      d.coll.count = size_t(per_rank_count ? ctx.bytes / uint64_t(ranks) : ctx.bytes);
      d.coll.datatype = "ncclInt8";
      d.coll.nChannels = 2;
      d.coll.nWarps = 16;
      const std::string algo(algo_name(slot_algo(pick))), proto(proto_name(slot_proto(pick)));
      d.coll.algo = algo.c_str();
      d.coll.proto = proto.c_str();
      void* coll = nullptr;
      plugin.profiler->startEvent(prof, &coll, &d);
      plugin.profiler->stopEvent(coll);
      const uint64_t span[2] = {uint64_t(ns) / 2, uint64_t(ns)};
      for (int ch = 0; ch < 2; ++ch) {
        NcclProfilerEventDescrV5 k;
        std::memset(&k, 0, sizeof k);
        k.type = kNcclProfileKernelCh;
        k.parentObj = coll;
        k.kernelCh.channelId = uint8_t(ch);
        k.kernelCh.pTimer = clock_ns + uint64_t(ch) * 7;
        void* h = nullptr;
        plugin.profiler->startEvent(prof, &h, &k);
        NcclProfilerEventStateArgs args;
        args.kernelCh.pTimer = k.kernelCh.pTimer + span[ch];
        plugin.profiler->recordEventState(h, kNcclProfilerKernelChStop, &args);
        plugin.profiler->stopEvent(h);
      }
      clock_ns += uint64_t(ns) + 1000;
      ++out.via_profiler;
    } else {
      if (!plugin.report)
        throw UsageError("--plugin exports no ncclbotReportLatency, needed for --feed report");
      const int rc = plugin.report(comm_id, ranks, ctx.nodes, int(ctx.collective), size_t(ctx.bytes),
                                   int(slot_algo(pick)), int(slot_proto(pick)), double(x));
      if (rc != 0) ++out.not_joined;
      ++out.via_report;
    }
  };
  std::deque<std::tuple<int, int, float>> in_flight;
  for (int t = 0; t < opt.horizon; ++t) {
    float call_table[kNumNcclAlgos][kNumProtos];
    std::memcpy(call_table, table, sizeof table);
    int channels = 0;
    plugin.tuner->getCollInfo(tuner, int(ctx.collective), size_t(ctx.bytes), 1,
                              reinterpret_cast<float**>(call_table), kNumNcclAlgos, kNumProtos, 0, &channels);
    const int pick = nccl_argmin(ArmMask{(1u << kNumNcclArms) - 1},
                                 [&](int s) { return call_table[s / kNumProtos][s % kNumProtos]; });
    ++out.steps;
    if (pick != replay_slots[size_t(t)]) {
      out.mismatches.push_back({c, t, pick, replay_slots[size_t(t)]});
      break;  // later steps follow from different observations
    }
    // The latency the call observed: the replay's draw, re-derived here as a check; with call
    // dynamics (levels, warm-up) it is the replay core's observed value.
    const float x =
        v.dynamic() ? replay_latency[size_t(t)] : replay_draw(v, c, pick, opt.seed, task.stream_id, t);
    if (std::memcmp(&x, &replay_latency[size_t(t)], sizeof x) != 0)
      throw std::runtime_error("plugin-check's draw differs from the replay's at context " +
                               std::to_string(c) + " step " + std::to_string(t));
    in_flight.emplace_back(t, pick, x);
    if (int(in_flight.size()) > opt.delay) {
      const auto [u, u_pick, u_x] = in_flight.front();
      in_flight.pop_front();
      report_latency(u, u_pick, u_x);
    }
  }
  plugin.tuner->finalize(tuner);
  plugin.profiler->finalize(prof);
  return out;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<PluginCheckOptions>();
  app.add_option("--plugin", opt->plugin_path, "path of libnccl-tuner-ncclbot.so")->required();
  app.add_option("--sweep", opt->sweep_path, "sweep CSV with prior_us (the cost table NCCL would pass)")
      ->required();
  app.add_option("--policy", opt->policy, "one policy spec, e.g. ucb1:c=0.5,n0=8")->required();
  app.add_option("--seed", opt->seed, "replay seed = NCCLBOT_SEED (default 0)");
  app.add_option("--horizon", opt->horizon, "calls per context (default 200)");
  app.add_option("--delay", opt->delay,
                 "feedback delay D: each call's latency is reported after the next D calls were decided "
                 "(default 0)");
  app.add_option("--nodes", opt->nodes, "only these node counts");
  app.add_option("--collectives", opt->collectives, "only these collectives");
  app.add_option("--feed", opt->feed,
                 "how latencies go back: profiler, report, or auto (profiler when ns timestamps carry the "
                 "value exactly, else report; default)")
      ->check(CLI::IsMember({"auto", "profiler", "report"}));
  app.add_option("--log", opt->log_path,
                 "have the plugin write its decision log here (NCCLBOT_LOG; a new file, docs/ope.md)");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    if (opt->horizon < 1) throw UsageError("--horizon must be at least 1");
    if (opt->delay < 0 || opt->delay > kMaxReplayDelay)
      throw UsageError("--delay must be in [0, " + std::to_string(kMaxReplayDelay) + "]");
    const PolicySpec spec = parse_policy_spec(opt->policy);
    if (policy_use(spec.config.kind) != PolicyUse::kLive)
      throw UsageError("--policy " + opt->policy + ": " + std::string(policy_name(spec.config.kind)) +
                       " cannot run inside NCCL (it needs the sweep's ground truth or a fitted model); its "
                       "decisions ship as a table (NCCLBOT_MODE=table)");
    ContextFilter filter;
    if (!opt->nodes.empty()) filter.nodes = parse_node_list(opt->nodes, "--nodes");
    if (!opt->collectives.empty())
      filter.collectives = parse_collective_list(opt->collectives, "--collectives");
    const Sweep sweep = read_sweep_csv(opt->sweep_path);
    if (!sweep.has_prior())
      throw InputError(opt->sweep_path, 0,
                       "needs a prior_us column: it is the cost table NCCL passes the plugin");
    const std::vector<int> contexts = filter.select(sweep);
    if (contexts.empty()) throw UsageError("no context of the sweep matches --nodes/--collectives");

    // The plugin reads its settings at each communicator's init. One process drives every rank's
    // decisions here, so the rank-local learner is the one to compare (docs/plugin.md).
    setenv("NCCLBOT_MODE", "online", 1);
    setenv("NCCLBOT_POLICY", spec.text.c_str(), 1);
    setenv("NCCLBOT_SEED", std::to_string(opt->seed).c_str(), 1);
    setenv("NCCLBOT_AGREEMENT", "local", 1);
    for (const char* name : {"NCCLBOT_STATE", "NCCLBOT_TABLE", "NCCLBOT_LEADER", "NCCLBOT_LOG",
                             "NCCLBOT_LOG_RANKS", "NCCLBOT_RANK"})
      unsetenv(name);
    if (!opt->log_path.empty()) {
      // A log of one run: appending to an older one would mix two policies under one header.
      check_output_not_input(opt->log_path, {opt->sweep_path, opt->plugin_path}, "--log");
      if (std::filesystem::exists(opt->log_path))
        throw UsageError("--log " + opt->log_path +
                         " exists; plugin-check writes a new log (remove it first)");
      if (opt->log_path.find('%') != std::string::npos)
        throw UsageError("--log names one file (no %r: plugin-check drives a single rank)");
      setenv("NCCLBOT_LOG", opt->log_path.c_str(), 1);
    }
    const LoadedPlugin plugin = load_plugin(opt->plugin_path);

    int checked = 0, skipped = 0, steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
    std::vector<Mismatch> mismatches;
    for (size_t i = 0; i < contexts.size(); ++i) {
      const int c = contexts[i];
      const ContextOutcome o = check_context(plugin, sweep, c, spec, *opt, opt->feed);
      if (!o.checked) {
        ++skipped;
        std::cerr << "plugin-check: context " << c << " skipped: " << o.skipped << "\n";
        continue;
      }
      ++checked;
      steps += o.steps;
      via_profiler += o.via_profiler;
      via_report += o.via_report;
      not_joined += o.not_joined;
      mismatches.insert(mismatches.end(), o.mismatches.begin(), o.mismatches.end());
      if (!opt->json && contexts.size() >= 20 && (i + 1) % 20 == 0)
        std::cerr << "plugin-check: " << (i + 1) << "/" << contexts.size() << " contexts\n";
    }
    for (size_t k = 0; k < mismatches.size() && int(k) < opt->max_reports; ++k) {
      const Mismatch& m = mismatches[k];
      const Context& ctx = sweep.context(m.context);
      std::cerr << "MISMATCH context " << m.context << " (" << ctx.fabric << " "
                << collective_name(ctx.collective) << " " << ctx.nodes << "x" << ctx.gpus_per_node << " "
                << ctx.bytes << " B) step " << m.step << ": plugin " << slot_label(m.plugin_slot)
                << ", replay " << slot_label(m.replay_slot) << "\n";
    }
    const bool equal = mismatches.empty() && checked > 0 && not_joined == 0;
    std::cerr << "plugin-check " << spec.text << " seed " << opt->seed
              << (opt->delay ? " delay " + std::to_string(opt->delay) : std::string()) << ": " << checked
              << " contexts x " << opt->horizon << " calls, " << steps << " decisions compared, "
              << mismatches.size() << " contexts differ; latencies fed via profiler " << via_profiler
              << ", via report " << via_report
              << (not_joined ? ", NOT JOINED " + std::to_string(not_joined) : std::string()) << "; "
              << (equal ? "EQUAL" : "DIFFERENT") << "\n";
    if (!opt->log_path.empty()) std::cerr << "plugin-check: decision log " << opt->log_path << "\n";
    if (opt->json) {
      nlohmann::json j;
      j["policy"] = spec.text;
      j["seed"] = opt->seed;
      j["horizon"] = opt->horizon;
      j["delay"] = opt->delay;
      j["contexts"] = checked;
      j["skipped"] = skipped;
      j["decisions"] = steps;
      j["via_profiler"] = via_profiler;
      j["via_report"] = via_report;
      j["not_joined"] = not_joined;
      j["equal"] = equal;
      if (!opt->log_path.empty()) j["log"] = opt->log_path;
      nlohmann::json list = nlohmann::json::array();
      for (const Mismatch& m : mismatches)
        list.push_back({{"context", m.context},
                        {"step", m.step},
                        {"plugin", slot_label(m.plugin_slot)},
                        {"replay", slot_label(m.replay_slot)}});
      j["mismatches"] = list;
      std::cout << j.dump() << "\n";
    }
    return equal ? 0 : 1;
  };
}

const bool registered = register_command(
    {"plugin-check", "load the built tuner plugin as NCCL does and check its decisions equal the replay's",
     setup});

}  // namespace plugin_check_command
}  // namespace ncclbot::cli
