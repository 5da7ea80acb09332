#include "plugin/plugin_runtime.hpp"

#include <string>

#include "plugin/context_key.hpp"
#include "plugin/leader_secret.hpp"
#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {

PluginRuntime& PluginRuntime::instance() {
  static PluginRuntime* runtime = new PluginRuntime();  // never destroyed, see the header
  return *runtime;
}

TunerComm* PluginRuntime::init_comm(uint64_t comm_id, bool has_comm_id, size_t nranks, size_t nnodes,
                                    nccl_logger_t logger, bool chunk_hook) {
  CommIdentity id;
  id.comm_id = comm_id;
  id.has_comm_id = has_comm_id;
  id.nranks = nranks > 0 && nranks < (1u << 30) ? int(nranks) : 1;
  id.nnodes = nnodes > 0 && nnodes < (1u << 30) ? int(nnodes) : 1;
  id.log = PluginLog(logger);
  auto comm = std::make_unique<TunerComm>(id);
  const PluginConfig cfg = PluginConfig::from_environment();
  if (!cfg.problems.empty()) id.log.warn("%s", cfg.problems.c_str());

  if (cfg.mode == Mode::kTable) {
    setup_table(*comm, cfg);
  } else if (cfg.mode == Mode::kOnline) {
    const int only = cfg.single_arm_left();
    if (only >= 0) {
      // NCCL has one arm left for every call: nothing to learn, so NCCL's own choices throughout.
      id.log.init_info(
          "NCCL_ALGO=%s NCCL_PROTO=%s leave NCCL one arm (%s/%s): nothing to learn, ncclbot steps aside",
          cfg.nccl_algo.c_str(), cfg.nccl_proto.c_str(), algo_label(only / kNumProtos),
          proto_label(only % kNumProtos));
    } else {
      setup_online(*comm, cfg, chunk_hook);
      if ((!cfg.nccl_algo.empty() || !cfg.nccl_proto.empty()) && comm->role() != Role::kPassThrough)
        id.log.init_info(
            "NCCL_ALGO=%s NCCL_PROTO=%s restrict NCCL's cost tables: ncclbot learns over the arms each table "
            "leaves, named at each context's first call",
            cfg.nccl_algo.empty() ? "(unset)" : cfg.nccl_algo.c_str(),
            cfg.nccl_proto.empty() ? "(unset)" : cfg.nccl_proto.c_str());
    }
  }
  if (auto sink = comm->latency_sink()) learners_.add(has_comm_id ? comm_id : 0, sink);
  if (comm->watches_fewer()) {
    watch_.rule_added();
    const WatchRule& r = comm->engine()->watch();
    id.log.init_info(
        "watch rule full=%u floor=%g: the profiler (v5 and later) switches kernel-channel events call by "
        "call, for the call expected next%s",
        r.full, r.floor, comm->latency_sink() ? "" : " (this rank learns nothing: its calls go unwatched)");
  }
  id.log.init_info("tuner initialised: commId 0x%llx, %d ranks, %d nodes, mode %s%s",
                   (unsigned long long)comm_id, id.nranks, id.nnodes, role_name(comm->role()),
                   comm->describe(cfg.table_path).c_str());
  comms_.add(comm.get(), logger);
  return comm.release();
}

void PluginRuntime::setup_table(TunerComm& comm, const PluginConfig& cfg) {
  const CommIdentity& id = comm.id();
  if (cfg.table_path.empty()) {
    id.log.warn("NCCLBOT_MODE=table needs NCCLBOT_TABLE; using NCCL's own choices");
    return;
  }
  auto table = std::make_shared<DecisionTable>();
  std::string error;
  if (!load_decision_table(cfg.table_path, cfg.fabric, table.get(), &error)) {
    id.log.warn("%s; using NCCL's own choices", error.c_str());
    return;
  }
  auto rows = table->rows_for(id.nnodes, id.nranks);
  comm.become<TableTuner>(std::move(table), std::move(rows));
}

void PluginRuntime::setup_online(TunerComm& comm, const PluginConfig& cfg, bool chunk_hook) {
  const CommIdentity& id = comm.id();
  std::string error;
  auto engine =
      PolicyEngine::create(cfg.policy_spec.empty() ? std::string("auto") : cfg.policy_spec, cfg.seed, &error);
  if (!engine) {
    id.log.warn("NCCLBOT_POLICY: %s; using NCCL's own choices", error.c_str());
    return;
  }
  const bool restricted = !cfg.nccl_algo.empty() || !cfg.nccl_proto.empty();
  std::shared_ptr<const KnobSpec> knobs;
  if (!cfg.knobs.empty() && !(knobs = knob_lists(id, cfg, chunk_hook))) return;
  if (id.nranks <= 1 || cfg.agreement == Agreement::kLocal) {
    if (knobs)
      setup_knobs(comm, cfg, engine, *knobs);
    else
      setup_local(comm, cfg, engine, restricted);
    return;
  }
  if (!id.has_comm_id) {
    id.log.warn(
        "online mode with %d ranks needs the v5 tuner ABI (NCCL 2.28) to tell communicators apart; "
        "using NCCL's own choices (table mode works with every version)",
        id.nranks);
    return;
  }
  if (cfg.leader_address.empty()) {
    id.log.warn(
        "online mode with %d ranks needs NCCLBOT_LEADER=host:port so that ranks agree; using NCCL's own "
        "choices",
        id.nranks);
    return;
  }
  if (cfg.rank < 0) {
    id.log.warn("cannot tell this process's rank (set NCCLBOT_RANK); using NCCL's own choices");
    return;
  }
  LeaderKey key;
  if (!load_leader_key(cfg.leader_secret, cfg.leader_secret_file, &key, &error)) {
    // Every rank without a usable secret passes through; a follower without one never says HELLO,
    // so the leader keeps NCCL's choice for its communicators too.
    if (warn_once(error))
      id.log.warn("online mode with several ranks needs the job's secret: %s; using NCCL's own choices",
                  error.c_str());
    return;
  }
  if (cfg.rank == 0)
    become_leader(comm, cfg, key, engine, restricted, leader_, decision_logs_, std::move(knobs));
  else
    become_follower(comm, cfg, key, engine, restricted, followers_);
}

void PluginRuntime::setup_local(TunerComm& comm, const PluginConfig& cfg,
                                const std::shared_ptr<const PolicyEngine>& engine, bool restricted) {
  const CommIdentity& id = comm.id();
  auto learner = std::make_shared<OnlineLearner>(id.comm_id, id.nranks, id.nnodes, engine, false);
  std::shared_ptr<DecisionLog> log = cfg.logs_this_rank() ? decision_logs_.open(cfg, id.log) : nullptr;
  if (log) learner->set_decision_log(log);
  LocalTuner& local = comm.become<LocalTuner>(CommLearner(engine, learner, log, cfg.state_path), restricted);
  local.learner().restore_state(id);
}

std::shared_ptr<const KnobSpec> PluginRuntime::knob_lists(const CommIdentity& id, const PluginConfig& cfg,
                                                          bool chunk_hook) {
  KnobSpec spec;
  try {
    spec = parse_knob_spec(cfg.knobs, "NCCLBOT_KNOBS");
  } catch (const std::exception& e) {
    id.log.warn("%s; using NCCL's own choices", e.what());
    return nullptr;
  }
  bool chunks = false;
  for (const auto& list : spec.chunks)
    chunks = chunks || list.size() > 1 || (list.size() == 1 && list[0] != 0);
  if (chunks && !chunk_hook) {
    // Without getChunkSize a chunk arm would run NCCL's chunk and be credited as another arm.
    id.log.warn(
        "NCCLBOT_KNOBS: chunk sizes need tuner v6 (getChunkSize, NCCL 2.30 and later), which this NCCL "
        "did not load; learning over the channel counts alone");
    for (auto& list : spec.chunks) list = {0};
  }
  return std::make_shared<const KnobSpec>(std::move(spec));
}

void PluginRuntime::setup_knobs(TunerComm& comm, const PluginConfig& cfg,
                                const std::shared_ptr<const PolicyEngine>& engine, const KnobSpec& spec) {
  const CommIdentity& id = comm.id();
  auto learner = std::make_shared<KnobLearner>(id.nranks, id.nnodes, engine, spec);
  if (cfg.logs_this_rank()) {
    if (engine->defers_propensity())  // Thompson sampling: an integral over up to 512 arms per call
      id.log.warn(
          "NCCLBOT_LOG: %s states its probabilities over knob arms only as integrals, which knob mode "
          "does not compute; no decision log",
          engine->spec().c_str());
    else if (std::shared_ptr<DecisionLog> log = decision_logs_.open(cfg, id.log))
      learner->set_decision_log(std::move(log), id.comm_id);
  }
  comm.become<KnobTuner>(std::move(learner), cfg.state_path).restore_state(id);
}

void PluginRuntime::finalize_comm(TunerComm* comm) {
  if (!comms_.remove(comm)) {  // finalized before, or never handed out: nothing of it may be read
    if (warn_once("tuner finalize of a context not live"))
      PluginLog(comms_.last_logger())
          .warn("tuner finalize of a context that is not live (finalized twice?): ignored, said once");
    return;
  }
  if (const CommLearner* l = comm->learner()) l->flush_log(comm->id());
  comm->save_state();
  if (auto sink = comm->latency_sink()) learners_.remove(sink);
  if (comm->watches_fewer()) watch_.rule_removed();
  comm->log_summary();
  delete comm;
}

bool PluginRuntime::report(uint64_t comm_id, int nranks, int nnodes, int coll, uint64_t bytes, int algo,
                           int proto, double latency_us) {
  if (algo < 0 || algo >= kNumNcclAlgos || proto < 0 || proto >= kNumProtos) return false;
  const int key = context_key(coll, bytes);
  if (key < 0) return false;
  auto learner = learner_for(comm_id, nranks, nnodes);
  if (!learner) return false;
  return learner->observe_ran(key, RanKnobs{algo, proto, -1}, latency_us, LatencySink::kOldestCall);
}

}  // namespace ncclbot::plugin
