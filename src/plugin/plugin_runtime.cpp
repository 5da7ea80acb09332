#include "plugin/plugin_runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <ctime>

#include "ncclbot/version.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/leader_secret.hpp"
#include "plugin/leader_server.hpp"
#include "plugin/plugin_names.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

const char* role_name(Role r) {
  switch (r) {
    case Role::kTable:
      return "table";
    case Role::kLocal:
      return "online (rank-local learner)";
    case Role::kLeader:
      return "online (leader)";
    case Role::kFollower:
      return "online (follower)";
    default:
      return "off (NCCL's own choices)";
  }
}

namespace {

// One WARN per distinct problem per process: a job creates many communicators.
// NCCL's version as the process's libnccl reports it (ncclGetVersion: 22800 for 2.28.0), or
// "unknown" when none is loaded (plugin-check drives the plugin without NCCL).
std::string nccl_version_text() {
  using GetVersion = int (*)(int*);
  const auto fn = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int v = 0;
  if (fn == nullptr || fn(&v) != 0) return "unknown";
  return std::to_string(v);
}

bool warn_once(const std::string& problem) {
  static std::mutex mu;
  static std::set<std::string>* seen = new std::set<std::string>();  // never destroyed, like the runtime
  std::lock_guard<std::mutex> lock(mu);
  return seen->insert(problem).second;
}

// Table mode's getCollInfo: the first row that matches the call and whose arm this call's cost table
// offers sets the arm, and the channel count when it gives one; a row that keeps NCCL's choice
// leaves the table alone and still sets its channel count (NCCL applies a tuner's nChannels to
// whichever arm it then picks); no row leaves both. Each context's first decided call is logged
// once. NCCL's hot path.
inline void apply_table_row(TunerComm* comm, int coll, size_t bytes, int num_pipe_ops, CostTable& table,
                            int reg_buff, int* nchannels) {
  const CallKey key{coll, uint64_t(bytes), comm->nnodes, comm->nranks, num_pipe_ops, reg_buff};
  // A row whose arm this call's table lacks is passed over; an explicit "keep NCCL's choice" row
  // (algo kAny) ends the search.
  const DecisionRow* row = deciding_row(comm->rows, key, [&](int slot) { return table.usable_slot(slot); });
  if (row == nullptr) return;
  const bool keeps_arm = row->algo == kAny;
  if (keeps_arm && row->channels <= 0) return;
  if (!keeps_arm && !table.choose(row->algo * kNumProtos + row->proto)) return;
  if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
  const int key_t = context_key(coll, bytes);
  if (key_t >= 0) {
    std::atomic<uint64_t>& w = comm->logged_keys[key_t / 64];
    const uint64_t b = uint64_t(1) << (key_t % 64);
    if ((w.load(std::memory_order_relaxed) & b) || (w.fetch_or(b) & b)) return;
    if (keeps_arm)
      comm->log.info("first call of %s %zu bytes: table row %ld keeps NCCL's arm with %d channels",
                     collective_label(coll), bytes, row->line, row->channels);
    else
      comm->log.info("first call of %s %zu bytes: table row %ld chose %s/%s", collective_label(coll), bytes,
                     row->line, algo_label(row->algo), proto_label(row->proto));
  }
}

// The INFO line of an online context's first call: NCCL's pick, ncclbot's (`slot`, -1 for NCCL's
// own) and, with NCCL_ALGO / NCCL_PROTO set, the arms this table leaves. Once per context.
void log_first_online_call(const TunerComm* comm, const CostTable& table, int coll, size_t bytes, int slot) {
  const int nccl_slot = table.nccl_pick_slot();
  std::string left;  // with NCCL_ALGO / NCCL_PROTO set: the arms this table leaves
  if (comm->restricted) {
    for (int s = 0; s < kNumArms; ++s)
      if (table.usable_slot(s))
        left += std::string(left.empty() ? "" : " ") + algo_label(s / kNumProtos) + "/" +
                proto_label(s % kNumProtos);
    left = "; arms left: " + (left.empty() ? std::string("none") : left);
  }
  comm->log.info("first call of %s %zu bytes on commId 0x%llx: NCCL's pick %s/%s, ncclbot's %s/%s%s",
                 collective_label(coll), bytes, (unsigned long long)comm->comm_id,
                 nccl_slot < 0 ? "none" : algo_label(nccl_slot / kNumProtos),
                 nccl_slot < 0 ? "" : proto_label(nccl_slot % kNumProtos),
                 slot < 0 ? "NCCL's" : algo_label(slot / kNumProtos),
                 slot < 0 ? "own" : proto_label(slot % kNumProtos), left.c_str());
}

}  // namespace

PluginRuntime& PluginRuntime::instance() {
  static PluginRuntime* runtime = new PluginRuntime();  // never destroyed, see the header
  return *runtime;
}

TunerComm* PluginRuntime::init_comm(uint64_t comm_id, bool has_comm_id, size_t nranks, size_t nnodes,
                                    nccl_logger_t logger) {
  auto comm = std::make_unique<TunerComm>();
  comm->comm_id = comm_id;
  comm->has_comm_id = has_comm_id;
  comm->nranks = nranks > 0 && nranks < (1u << 30) ? int(nranks) : 1;
  comm->nnodes = nnodes > 0 && nnodes < (1u << 30) ? int(nnodes) : 1;
  comm->log = PluginLog(logger);
  const PluginConfig cfg = PluginConfig::from_environment();
  if (!cfg.problems.empty()) comm->log.warn("%s", cfg.problems.c_str());
  comm->state_path = cfg.state_path;
  comm->timeout_ms = cfg.leader_timeout_ms;

  if (cfg.mode == Mode::kTable) {
    if (cfg.table_path.empty()) {
      comm->log.warn("NCCLBOT_MODE=table needs NCCLBOT_TABLE; using NCCL's own choices");
    } else {
      auto table = std::make_shared<DecisionTable>();
      std::string error;
      if (table->load_file(cfg.table_path, cfg.fabric, &error)) {
        comm->table = table;
        comm->rows = table->rows_for(comm->nnodes, comm->nranks);
        comm->role = Role::kTable;
      } else {
        comm->log.warn("%s; using NCCL's own choices", error.c_str());
      }
    }
  } else if (cfg.mode == Mode::kOnline) {
    const int only = cfg.single_arm_left();
    if (only >= 0) {
      // NCCL has one arm left for every call: nothing to learn, so NCCL's own choices throughout.
      comm->log.init_info(
          "NCCL_ALGO=%s NCCL_PROTO=%s leave NCCL one arm (%s/%s): nothing to learn, ncclbot steps aside",
          cfg.nccl_algo.c_str(), cfg.nccl_proto.c_str(), algo_label(only / kNumProtos),
          proto_label(only % kNumProtos));
    } else {
      setup_online(*comm, cfg);
      comm->restricted = !cfg.nccl_algo.empty() || !cfg.nccl_proto.empty();
      if (comm->restricted && comm->role != Role::kPassThrough)
        comm->log.init_info(
            "NCCL_ALGO=%s NCCL_PROTO=%s restrict NCCL's cost tables: ncclbot learns over the arms each table "
            "leaves, named at each context's first call",
            cfg.nccl_algo.empty() ? "(unset)" : cfg.nccl_algo.c_str(),
            cfg.nccl_proto.empty() ? "(unset)" : cfg.nccl_proto.c_str());
    }
  }
  if (comm->learner) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.emplace(comm->has_comm_id ? comm_id : 0, comm->learner);
  }
  std::string detail;
  if (comm->role == Role::kTable)
    detail = ", table " + cfg.table_path + " (" + std::to_string(comm->rows.size()) + " rows apply)";
  else if (comm->engine && comm->role != Role::kPassThrough)
    detail = ", policy " + comm->engine->spec() + ", seed " + std::to_string(comm->engine->seed());
  comm->log.init_info("tuner initialised: commId 0x%llx, %d ranks, %d nodes, mode %s%s",
                      (unsigned long long)comm_id, comm->nranks, comm->nnodes, role_name(comm->role),
                      detail.c_str());
  comms_.add(comm.get(), logger);
  return comm.release();
}

void PluginRuntime::setup_online(TunerComm& comm, const PluginConfig& cfg) {
  std::string error;
  auto engine =
      PolicyEngine::create(cfg.policy_spec.empty() ? std::string("auto") : cfg.policy_spec, cfg.seed, &error);
  if (!engine) {
    comm.log.warn("NCCLBOT_POLICY: %s; using NCCL's own choices", error.c_str());
    return;
  }
  comm.engine = engine;
  if (comm.nranks <= 1 || cfg.agreement == Agreement::kLocal) {
    comm.learner = std::make_shared<OnlineLearner>(comm.comm_id, comm.nranks, comm.nnodes, engine, false);
    comm.role = Role::kLocal;
    if (cfg.logs_this_rank()) {
      comm.decision_log = decision_log(cfg, comm.log);
      if (comm.decision_log) comm.learner->set_decision_log(comm.decision_log);
    }
    load_state(comm);
    return;
  }
  if (!comm.has_comm_id) {
    comm.log.warn(
        "online mode with %d ranks needs the v5 tuner ABI (NCCL 2.28) to tell communicators apart; "
        "using NCCL's own choices (table mode works with every version)",
        comm.nranks);
    return;
  }
  if (cfg.leader_address.empty()) {
    comm.log.warn(
        "online mode with %d ranks needs NCCLBOT_LEADER=host:port so that ranks agree; using NCCL's own "
        "choices",
        comm.nranks);
    return;
  }
  if (cfg.rank < 0) {
    comm.log.warn("cannot tell this process's rank (set NCCLBOT_RANK); using NCCL's own choices");
    return;
  }
  LeaderKey key;
  if (!load_leader_key(cfg.leader_secret, cfg.leader_secret_file, &key, &error)) {
    // Every rank without a usable secret passes through; a follower without one never says HELLO,
    // so the leader keeps NCCL's choice for its communicators too.
    if (warn_once(error))
      comm.log.warn("online mode with several ranks needs the job's secret: %s; using NCCL's own choices",
                    error.c_str());
    return;
  }
  if (cfg.rank == 0) {
    if (!setup_leader_role(comm, cfg, key, engine)) return;
  } else {
    setup_follower_role(comm, cfg, key);
    return;
  }
  load_state(comm);
}

// setup_online for rank 0 of several: starts (or joins) the leader server and counts this rank in its
// communicator's learner. false when the communicator passes through. Takes mu_ itself.
bool PluginRuntime::setup_leader_role(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                                      const std::shared_ptr<const PolicyEngine>& engine) {
  if (!start_leader(cfg, key, engine, comm.log)) return false;
  // The leader logs the decisions of its own rank. The log is opened before the runtime's lock is
  // taken (decision_log() takes it itself).
  std::shared_ptr<DecisionLog> log;
  if (cfg.logs_this_rank()) log = decision_log(cfg, comm.log);
  std::lock_guard<std::mutex> lock(mu_);
  comm.learner = leader_learner_locked(comm.comm_id, comm.nranks, comm.nnodes, true);
  if (!comm.learner) {
    comm.log.warn("the leader already knows communicator 0x%llx with another shape; using NCCL's own choices",
                  (unsigned long long)comm.comm_id);
    return false;
  }
  const int local_ranks = ++local_members_[comm.comm_id];
  comm.member = OnlineLearner::local_member(uint32_t(local_ranks - 1));
  comm.learner->add_member(comm.member);
  // The latencies the leader's profiler reports do not say which rank of this process measured
  // them, so a second rank of the communicator here ends the log.
  if (log) {
    if (local_ranks == 1) {
      comm.decision_log = log;
      comm.learner->set_decision_log(comm.decision_log, comm.member);
    } else {
      comm.learner->stop_decision_log();
      comm.log.warn(
          "NCCLBOT_LOG: this process holds %d ranks of commId 0x%llx, whose latencies the log cannot "
          "tell apart; its decisions are not logged from here on",
          local_ranks, (unsigned long long)comm.comm_id);
    }
  }
  update_activation_locked(comm.comm_id);
  comm.next_call.assign(kNumContextKeys, 0);
  comm.role = Role::kLeader;
  return true;
}

// setup_online for the other ranks: announces this rank to the leader and, unless the leader cannot
// have counted it, follows the leader's decisions. Takes mu_ itself.
void PluginRuntime::setup_follower_role(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key) {
  std::string error;
  auto link = follower_link(cfg, key, &error);
  if (!link) {
    comm.log.warn("%s; using NCCL's own choices (the leader does too until every rank has joined)",
                  error.c_str());
    return;
  }
  WireHello h;
  h.comm_id = comm.comm_id;
  h.nranks = uint32_t(comm.nranks);
  h.nnodes = uint32_t(comm.nnodes);
  h.rank = uint32_t(cfg.rank);
  {
    std::lock_guard<std::mutex> lock(mu_);
    h.ordinal = follower_ordinals_[comm.comm_id]++;
  }
  // Passing through is safe only where the leader cannot have counted this rank, or is gone.
  switch (link->hello(h, cfg.leader_timeout_ms)) {
    case FollowerLink::Joined::kAcked:
      break;
    case FollowerLink::Joined::kPending:
      comm.log.warn(
          "the leader at %s has not answered this rank's HELLO for commId 0x%llx within %d ms; it may have "
          "counted it, so this rank follows the leader and waits for its decisions",
          cfg.leader_address.c_str(), (unsigned long long)comm.comm_id, cfg.leader_timeout_ms);
      break;
    case FollowerLink::Joined::kRefused:
      comm.log.warn(
          "the leader at %s refused this rank of commId 0x%llx (another shape, or its cap on "
          "communicators); using NCCL's own choices, as the leader does for this communicator",
          cfg.leader_address.c_str(), (unsigned long long)comm.comm_id);
      return;
    case FollowerLink::Joined::kUnreached:
      comm.log.warn(
          "could not announce this rank of commId 0x%llx to the leader at %s within %d ms; "
          "using NCCL's own choices (the leader does too until every rank has joined)",
          (unsigned long long)comm.comm_id, cfg.leader_address.c_str(), cfg.leader_timeout_ms);
      return;
    case FollowerLink::Joined::kLeaderGone:
      comm.log.warn(
          "the leader at %s refuses connections (its process is gone); "
          "commId 0x%llx uses NCCL's own choices",
          cfg.leader_address.c_str(), (unsigned long long)comm.comm_id);
      return;
  }
  comm.link = link;
  comm.self = h;
  comm.next_call.assign(kNumContextKeys, 0);
  comm.role = Role::kFollower;
  if (cfg.logs_this_rank() && warn_once("NCCLBOT_LOG follower"))
    comm.log.warn(
        "NCCLBOT_LOG: a follower plays the leader's decisions and does not log them; the leader (rank 0) "
        "logs the job's decisions");
}

bool PluginRuntime::on_hello(void* self, const WireHello& h) {
  auto* rt = static_cast<PluginRuntime*>(self);
  try {
    std::lock_guard<std::mutex> l(rt->mu_);
    auto learner = rt->leader_learner_locked(h.comm_id, int(h.nranks), int(h.nnodes), false);
    if (!learner) return false;
    learner->add_member(OnlineLearner::follower_member(h.rank, h.ordinal));  // a repeated HELLO counts once
    rt->update_activation_locked(h.comm_id);
    return true;
  } catch (...) {
    return false;
  }
}

void PluginRuntime::on_request(void* self, const WireRequest& r, WireDecisions* d) {
  auto* rt = static_cast<PluginRuntime*>(self);
  d->status = DecisionStatus::kLater;
  try {
    std::shared_ptr<OnlineLearner> learner;
    {
      std::lock_guard<std::mutex> l(rt->mu_);
      learner = rt->leader_learner_locked(r.comm_id, int(r.nranks), int(r.nnodes), false);
    }
    if (!learner) return;
    float prior[kNumArms];
    std::memcpy(prior, r.prior, sizeof r.prior);
    for (int s = kNumNcclArms; s < kNumArms; ++s) prior[s] = -1.0f;
    if (learner->decide_range(int(r.key), r.bytes, prior, r.start, int(r.count), d->slots,
                              OnlineLearner::follower_member(r.rank, r.ordinal)))
      d->status = DecisionStatus::kOk;
  } catch (...) {
    d->status = DecisionStatus::kLater;
  }
}

bool PluginRuntime::start_leader(const PluginConfig& cfg, const LeaderKey& key,
                                 std::shared_ptr<const PolicyEngine> engine, const PluginLog& log) {
  std::lock_guard<std::mutex> lock(mu_);
  if (leader_started_) return true;
  LeaderHandler handler;
  handler.hello = &PluginRuntime::on_hello;
  handler.decide = &PluginRuntime::on_request;
  handler.ctx = this;
  std::string error;
  leader_engine_ = engine;
  if (!LeaderServer::start(cfg.leader_address, key, handler, LeaderLimits{}, &error)) {
    log.warn("%s; using NCCL's own choices", error.c_str());
    leader_engine_.reset();
    return false;
  }
  leader_started_ = true;
  log.init_info("decision leader listening on %s (authenticated)", cfg.leader_address.c_str());
  return true;
}

std::shared_ptr<OnlineLearner> PluginRuntime::leader_learner_locked(uint64_t comm_id, int nranks, int nnodes,
                                                                    bool local) {
  auto it = leader_learners_.find(comm_id);
  if (it != leader_learners_.end()) {
    if (it->second->nranks() != nranks || it->second->nnodes() != nnodes) return nullptr;
    if (local && local_members_[comm_id] == 0 && foreign_learners_ > 0) --foreign_learners_;
    return it->second;
  }
  if (!local && foreign_learners_ >= kMaxForeignLearners) return nullptr;
  // A communicator the leader has not joined (yet): its decisions stay NCCL's own until all of its
  // ranks, the leader's included, are present.
  auto learner = std::make_shared<OnlineLearner>(comm_id, nranks, nnodes, leader_engine_, true);
  learner->set_active(false);
  leader_learners_.emplace(comm_id, learner);
  if (!local) ++foreign_learners_;
  update_activation_locked(comm_id);
  return learner;
}

void PluginRuntime::update_activation_locked(uint64_t comm_id) {
  auto it = leader_learners_.find(comm_id);
  if (it == leader_learners_.end()) return;
  const int local = local_members_[comm_id];
  // Sticky: once every rank is present, contexts may start (each once every rank's cost table of it
  // is in); memoised decisions never change.
  if (local > 0 && it->second->members() >= size_t(it->second->nranks()) && !it->second->active())
    it->second->set_active(true);
}

std::shared_ptr<FollowerLink> PluginRuntime::follower_link(const PluginConfig& cfg, const LeaderKey& key,
                                                           std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  // A broken link still serves (and reopens for) the communicators that joined through it; a new
  // communicator gets a fresh connection, so one refused HELLO does not doom the next.
  if (link_ && link_address_ == cfg.leader_address && link_->healthy()) return link_;
  link_ = FollowerLink::connect(cfg.leader_address, key, cfg.leader_timeout_ms, error);
  if (link_) link_address_ = cfg.leader_address;
  return link_;
}

void PluginRuntime::load_state(TunerComm& comm) {
  if (comm.state_path.empty() || !comm.learner) return;
  std::lock_guard<std::mutex> lock(state_mu_);
  StateFile file(*comm.engine);
  std::string warning;
  if (!file.load(comm.state_path, &warning)) {
    comm.log.warn("%s", warning.c_str());
    return;
  }
  const int restored = comm.learner->import_contexts(file);
  // Whether this communicator continues or starts clean (a split or shrunk one is a new shape).
  if (restored > 0)
    comm.log.info("commId 0x%llx: restored %d contexts from %s", (unsigned long long)comm.comm_id, restored,
                  comm.state_path.c_str());
  else
    comm.log.info("commId 0x%llx: %s holds no context of %d ranks on %d nodes: starts clean",
                  (unsigned long long)comm.comm_id, comm.state_path.c_str(), comm.nranks, comm.nnodes);
}

void PluginRuntime::save_state(TunerComm& comm) {
  if (comm.state_path.empty() || !comm.learner) return;
  std::lock_guard<std::mutex> lock(state_mu_);
  StateFile file(*comm.engine);
  comm.learner->export_contexts(file);
  std::string warning;
  if (!file.save(comm.state_path, &warning)) comm.log.warn("state not saved: %s", warning.c_str());
}

std::shared_ptr<DecisionLog> PluginRuntime::decision_log(const PluginConfig& cfg, const PluginLog& log) {
  const std::string path = DecisionLog::expand(cfg.log_path, cfg.rank);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = decision_logs_.find(path); it != decision_logs_.end()) return it->second;
  // The header: what a reader needs to interpret the records and to recompute any number from them.
  std::string text = "format=ncclbot decision log\npolicy=" +
                     (cfg.policy_spec.empty() ? std::string("auto") : cfg.policy_spec) +
                     "\nseed=" + std::to_string(cfg.seed) + "\nrank=" + std::to_string(cfg.rank) +
                     "\npid=" + std::to_string(::getpid()) + "\nplugin_version=" + std::string(kVersion) +
                     "\nnccl_version=" + nccl_version_text() +
                     "\nstarted_unix=" + std::to_string(::time(nullptr)) + "\n";
  std::string error;
  DecisionLogSettings settings{cfg.log_path, cfg.log_max_bytes, text};
  std::shared_ptr<DecisionLog> opened = DecisionLog::open(settings, cfg.rank, &error);
  if (!opened) {
    log.warn("NCCLBOT_LOG: %s; no decision log", error.c_str());
    decision_logs_[path] = nullptr;  // said once
    return nullptr;
  }
  log.info("decision log: %s", opened->path().c_str());
  decision_logs_[path] = opened;
  return opened;
}

void PluginRuntime::finalize_comm(TunerComm* comm) {
  if (!comms_.remove(comm)) {  // finalized before, or never handed out: nothing of it may be read
    if (warn_once("tuner finalize of a context not live"))
      PluginLog(comms_.last_logger())
          .warn("tuner finalize of a context that is not live (finalized twice?): ignored, said once");
    return;
  }
  if (const auto& log = comm->decision_log) {
    log->flush();
    if (log->dropped() > 0 || log->failed_writes() > 0)
      comm->log.warn("NCCLBOT_LOG %s: %llu records dropped (the buffer was full), %llu writes failed, so far",
                     log->path().c_str(), (unsigned long long)log->dropped(),
                     (unsigned long long)log->failed_writes());
  }
  if (comm->role == Role::kLocal || comm->role == Role::kLeader) save_state(*comm);
  if (comm->learner) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = live_.begin(); it != live_.end();) {
      auto held = it->second.lock();
      if (!held || held == comm->learner)
        it = live_.erase(it);
      else
        ++it;
    }
  }
  if (comm->learner && comm->learner->table_mismatches() > 0)
    comm->log.warn(
        "commId 0x%llx: %llu contexts switched to NCCL's choice for every rank because a follower's cost "
        "table "
        "lacked an arm of the leader's",
        (unsigned long long)comm->comm_id, (unsigned long long)comm->learner->table_mismatches());
  if (comm->learner) {
    comm->log.info(
        "tuner finalised: commId 0x%llx, %llu decisions, %llu measured latencies, %llu latencies outside "
        "[%g, %g] us or untimed dropped (not learned from, not logged)",
        (unsigned long long)comm->comm_id, (unsigned long long)comm->learner->decisions(),
        (unsigned long long)comm->learner->observations(),
        (unsigned long long)comm->learner->unmeasurable_latencies(), decision_log::kMinLatencyUs,
        decision_log::kMaxLatencyUs);
    const FeedbackLagHistogram lag = comm->learner->feedback_lag();
    if (lag.count() > 0)
      comm->log.info(
          "commId 0x%llx: feedback delay of %llu policy decisions: median %llu, p90 %llu, max %llu "
          "calls (replay --delay D)",
          (unsigned long long)comm->comm_id, (unsigned long long)lag.count(),
          (unsigned long long)lag.quantile(0.5), (unsigned long long)lag.quantile(0.9),
          (unsigned long long)lag.max());
  }
  if (comm->role == Role::kFollower) {
    // How often the lookahead (docs/plugin.md "Decision windows") did not bring a window in time.
    comm->log.info("commId 0x%llx: follower waited for %llu of %llu decisions (longest %.3f ms)",
                   (unsigned long long)comm->comm_id, (unsigned long long)comm->waits.waited.load(),
                   (unsigned long long)comm->waits.decisions.load(),
                   double(comm->waits.longest_ns.load()) / 1e6);
  }
  delete comm;
}

void PluginRuntime::get_chunk_size(TunerComm* comm, int coll, size_t bytes, int algo, int proto,
                                   size_t* chunk_size) const {
  if (comm->role != Role::kTable || chunk_size == nullptr) return;
  // An index outside NCCL's would name another arm's slot (algo 0, proto 5 is Ring/Simple's).
  if (algo < 0 || algo >= kNumNcclAlgos || proto < 0 || proto >= kNumProtos) return;
  const CallKey key{coll, uint64_t(bytes), comm->nnodes, comm->nranks, kAny, kAny};
  const int ran = algo * kNumProtos + proto;
  // As getCollInfo searches, with only the arm NCCL runs usable: an explicit "keep NCCL's choice"
  // row before it ends the search there.
  const DecisionRow* row = deciding_row(comm->rows, key, [&](int slot) { return slot == ran; });
  // The table refuses a chunk off the protocol's grain at load; checked again here because NCCL
  // divides by the rounded chunk.
  if (row != nullptr && row->algo != kAny && row->chunk_bytes > 0 &&
      chunk_fits_grain(row->chunk_bytes, proto))
    *chunk_size = size_t(row->chunk_bytes);
}

void PluginRuntime::get_coll_info(TunerComm* comm, int coll, size_t bytes, int num_pipe_ops,
                                  float** cost_table, int num_algo, int num_proto, int reg_buff,
                                  int* nchannels) {
  if (comm->role == Role::kPassThrough) return;
  CostTable table(cost_table, num_algo, num_proto);
  if (!table.present()) return;

  if (comm->role == Role::kTable) {
    apply_table_row(comm, coll, bytes, num_pipe_ops, table, reg_buff, nchannels);
    return;
  }

  const int key = context_key(coll, bytes);
  if (key < 0) return;
  int slot = -1;
  if (comm->role == Role::kFollower) {
    float prior[kNumArms];
    table.prior(prior);
    uint64_t index;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      index = comm->next_call[size_t(key)]++;
    }
    // A counted follower never decides on its own (the others would play the leader's decision);
    // it waits for the leader, which a live job always has, and says so while it waits.
    slot = comm->link->decision(
        comm->self, key, index, bytes, prior, comm->timeout_ms,
        [&](int waited_ms) {
          comm->log.warn(
              "still waiting for the leader after %d ms (call %llu of %s %zu bytes); "
              "the ranks must play the leader's decisions, so this rank waits",
              waited_ms, (unsigned long long)index, collective_label(coll), bytes);
        },
        &comm->waits);
    if (slot < 0 && !comm->warned_gone.load(std::memory_order_relaxed) && comm->link->leader_gone() &&
        !comm->warned_gone.exchange(true))
      comm->log.warn(
          "the leader refuses connections (its process is gone, and with it every communicator it was part "
          "of): commId 0x%llx uses NCCL's own choices from call %llu of %s %zu bytes on",
          (unsigned long long)comm->comm_id, (unsigned long long)index, collective_label(coll), bytes);
  } else if (comm->role == Role::kLeader) {
    uint64_t index;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      index = comm->next_call[size_t(key)]++;
    }
    slot = comm->learner->decide_at(key, bytes, table, index, comm->member);
  } else {
    slot = comm->learner->decide_next(key, bytes, table);
  }
  std::atomic<uint64_t>& word = comm->logged_keys[key / 64];
  const uint64_t bit = uint64_t(1) << (key % 64);
  if (!(word.load(std::memory_order_relaxed) & bit) && !(word.fetch_or(bit) & bit)) {
    log_first_online_call(comm, table, coll, bytes, slot);
  }
  if (slot >= 0 && !table.choose(slot) && !comm->warned_unusable.exchange(true))
    comm->log.warn("decided arm %s/%s is not usable for %s %zu bytes on this rank; kept NCCL's choice",
                   algo_label(slot / kNumProtos), proto_label(slot % kNumProtos), collective_label(coll),
                   bytes);
}

void PluginRuntime::get_coll_info_v2(TunerComm* comm, int coll, size_t bytes, int coll_net, int nvls,
                                     int num_pipe_ops, int* algorithm, int* protocol, int* nchannels) {
  if (comm->role != Role::kTable || algorithm == nullptr || protocol == nullptr) return;
  const CallKey key{coll, uint64_t(bytes), comm->nnodes, comm->nranks, num_pipe_ops, kAny};
  for (const DecisionRow* row : comm->rows) {
    if (!DecisionTable::matches(*row, key)) continue;
    if (row->algo == kAny) {  // NCCL's arm, with the row's channel count when it gives one
      if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
      return;
    }
    const bool needs_collnet = row->algo == 2 || row->algo == 3;
    const bool needs_nvls = row->algo == 4 || row->algo == 5;
    if ((needs_collnet && !coll_net) || (needs_nvls && !nvls)) continue;
    *algorithm = row->algo;
    *protocol = row->proto;
    if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
    return;
  }
}

std::shared_ptr<OnlineLearner> PluginRuntime::learner_for(uint64_t comm_id, int nranks, int nnodes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto range = live_.equal_range(comm_id);
  for (auto it = range.first; it != range.second; ++it)
    if (auto l = it->second.lock()) return l;
  std::shared_ptr<OnlineLearner> newest;
  auto unknown = live_.equal_range(0);
  for (auto it = unknown.first; it != unknown.second; ++it)
    if (auto l = it->second.lock(); l && l->nranks() == nranks && l->nnodes() == nnodes) newest = l;
  return newest;
}

bool PluginRuntime::report(uint64_t comm_id, int nranks, int nnodes, int coll, uint64_t bytes, int algo,
                           int proto, double latency_us) {
  if (algo < 0 || algo >= kNumNcclAlgos || proto < 0 || proto >= kNumProtos) return false;
  const int key = context_key(coll, bytes);
  if (key < 0) return false;
  auto learner = learner_for(comm_id, nranks, nnodes);
  if (!learner) return false;
  return learner->observe(key, algo * kNumProtos + proto, latency_us);
}

}  // namespace ncclbot::plugin
