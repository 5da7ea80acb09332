#include "plugin/knob_tuner.hpp"

#include <string>

#include "plugin/decision_logs.hpp"
#include "plugin/plugin_names.hpp"
#include "plugin/state_keeping.hpp"

namespace ncclbot::plugin {
namespace {

// "Ring/Simple, 8 channels, chunk 131072 B", with NCCL's own values said as such.
std::string arm_text(const Arm& a) {
  std::string s = std::string(algo_label(int(a.algo))) + "/" + proto_label(int(a.proto)) + ", ";
  s += a.channels ? std::to_string(a.channels) + " channels" : std::string("NCCL's channels");
  s += a.chunk_bytes ? ", chunk " + std::to_string(a.chunk_bytes) + " B" : std::string(", NCCL's chunk");
  return s;
}

}  // namespace

void KnobTuner::get_chunk_size(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size) {
  if (const ChunkHandover::Pending* p = chunks_.hand_over(id, coll, algo, proto, chunk_size))
    KnobLearner::chunk_set(p->record, p->arm.chunk_bytes);
}

void KnobTuner::log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes,
                               const KnobDecision& d) const {
  const int key = context_key(coll, bytes);
  const size_t crossing = learner_->crossing(key);
  if (crossing > size_t(kKnobArms)) {
    id.log.warn(
        "%s %zu bytes on commId 0x%llx: NCCLBOT_KNOBS gives this context %zu arms, more than the %d a "
        "policy holds; NCCL's own choices here (shorten the lists)",
        collective_label(coll), bytes, (unsigned long long)id.comm_id, crossing, kKnobArms);
    return;
  }
  const int nccl_slot = table.nccl_pick_slot();
  const std::string ours = d.index < 0 ? std::string("NCCL's own") : arm_text(d.arm);
  id.log.info("first call of %s %zu bytes on commId 0x%llx: NCCL's pick %s/%s, ncclbot's %s (%zu knob arms)",
              collective_label(coll), bytes, (unsigned long long)id.comm_id,
              nccl_slot < 0 ? "none" : algo_label(nccl_slot / kNumProtos),
              nccl_slot < 0 ? "" : proto_label(nccl_slot % kNumProtos), ours.c_str(), crossing);
}

void KnobTuner::warn_unusable(const CommIdentity& id, int coll, size_t bytes, const Arm& arm) {
  id.log.warn("decided arm %s is not usable for %s %zu bytes on this rank; kept NCCL's choice",
              arm_text(arm).c_str(), collective_label(coll), bytes);
}

void KnobTuner::restore_state(const CommIdentity& id) const {
  restore_learner_state<kKnobArms>(id, learner_->engine(), &learner_->spec(), state_path_, *learner_);
}

void KnobTuner::save_state(const CommIdentity& id) const {
  save_learner_state<kKnobArms>(id, learner_->engine(), &learner_->spec(), state_path_, *learner_);
}

void KnobTuner::log_summary(const CommIdentity& id) const {
  if (const auto& log = learner_->decision_log()) flush_decision_log(*log, id.log);
  const KnobLearner::Totals t = learner_->totals();
  id.log.info(
      "knob learner: %llu decisions, %llu latencies learned, %llu calls settled unlearned (%llu whose "
      "latency never came, %llu run unwatched by the watch rule)",
      (unsigned long long)t.decisions, (unsigned long long)t.learned, (unsigned long long)t.unlearned,
      (unsigned long long)t.lost, (unsigned long long)t.unwatched);
}

}  // namespace ncclbot::plugin
