#include "plugin/follower_tuner.hpp"

#include "plugin/context_key.hpp"
#include "plugin/follower_hub.hpp"
#include "plugin/plugin_names.hpp"
#include "plugin/tuner_comm.hpp"

namespace ncclbot::plugin {

void FollowerTuner::get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/,
                                  CostTable table, int /*reg_buff*/, int* nchannels) {
  const int key = context_key(coll, bytes);
  if (key < 0) return;
  float prior[kNumArms];
  table.prior(prior);
  const uint64_t index = calls_.next(key);
  // A counted follower never decides on its own (the others would play the leader's decision); it
  // waits for the leader, which a live job always has, and says so while it waits.
  const DecidedArm arm = link_->decision(
      self_, key, index, bytes, prior, timeout_ms_,
      [&](int waited_ms) {
        id.log.warn(
            "still waiting for the leader after %d ms (call %llu of %s %zu bytes); "
            "the ranks must play the leader's decisions, so this rank waits",
            waited_ms, (unsigned long long)index, collective_label(coll), bytes);
      },
      &waits_);
  if (arm.nccl_own() && !warned_gone_.load(std::memory_order_relaxed) && link_->leader_gone() &&
      !warned_gone_.exchange(true))
    id.log.warn(
        "the leader refuses connections (its process is gone, and with it every communicator it was part "
        "of): commId 0x%llx uses NCCL's own choices from call %llu of %s %zu bytes on",
        (unsigned long long)id.comm_id, (unsigned long long)index, collective_label(coll), bytes);
  pick_.play_arm(id, table, coll, bytes, key, arm, index, nchannels);
}

void FollowerTuner::log_waits(const CommIdentity& id) const {
  id.log.info("commId 0x%llx: follower waited for %llu of %llu decisions (longest %.3f ms)",
              (unsigned long long)id.comm_id, (unsigned long long)waits_.waited.load(),
              (unsigned long long)waits_.decisions.load(), double(waits_.longest_ns.load()) / 1e6);
}

// Passing through is safe only where the leader cannot have counted this rank, or is gone.
void become_follower(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                     const std::shared_ptr<const PolicyEngine>& engine, bool restricted, FollowerHub& hub) {
  const CommIdentity& id = comm.id();
  std::string error;
  auto link = hub.link(cfg, key, &error);
  if (!link) {
    id.log.warn("%s; using NCCL's own choices (the leader does too until every rank has joined)",
                error.c_str());
    return;
  }
  WireHello h;
  h.comm_id = id.comm_id;
  h.nranks = uint32_t(id.nranks);
  h.nnodes = uint32_t(id.nnodes);
  h.rank = uint32_t(cfg.rank);
  h.ordinal = hub.next_ordinal(id.comm_id);
  switch (link->hello(h, cfg.leader_timeout_ms)) {
    case FollowerLink::Joined::kAcked:
      break;
    case FollowerLink::Joined::kPending:
      id.log.warn(
          "the leader at %s has not answered this rank's HELLO for commId 0x%llx within %d ms; it may have "
          "counted it, so this rank follows the leader and waits for its decisions",
          cfg.leader_address.c_str(), (unsigned long long)id.comm_id, cfg.leader_timeout_ms);
      break;
    case FollowerLink::Joined::kRefused:
      id.log.warn(
          "the leader at %s refused this rank of commId 0x%llx (another shape, or its cap on "
          "communicators); using NCCL's own choices, as the leader does for this communicator",
          cfg.leader_address.c_str(), (unsigned long long)id.comm_id);
      return;
    case FollowerLink::Joined::kUnreached:
      id.log.warn(
          "could not announce this rank of commId 0x%llx to the leader at %s within %d ms; "
          "using NCCL's own choices (the leader does too until every rank has joined)",
          (unsigned long long)id.comm_id, cfg.leader_address.c_str(), cfg.leader_timeout_ms);
      return;
    case FollowerLink::Joined::kLeaderGone:
      id.log.warn(
          "the leader at %s refuses connections (its process is gone); "
          "commId 0x%llx uses NCCL's own choices",
          cfg.leader_address.c_str(), (unsigned long long)id.comm_id);
      return;
  }
  comm.become<FollowerTuner>(engine, link, h, cfg.leader_timeout_ms, restricted);
  if (cfg.logs_this_rank() && warn_once("NCCLBOT_LOG follower"))
    id.log.warn(
        "NCCLBOT_LOG: a follower plays the leader's decisions and does not log them; the leader (rank 0) "
        "logs the job's decisions");
}

}  // namespace ncclbot::plugin
