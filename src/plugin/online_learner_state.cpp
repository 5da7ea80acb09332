// A learner's contexts to and from the state file (state_file.hpp keeps the format).
#include "plugin/online_learner.hpp"

#include <cstring>

#include "ncclbot/replay/replay.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

template <int N>
void OnlineLearnerT<N>::export_contexts(StateFile& file) const {
  // The state file holds slot arms only (the caller says so).
  if constexpr (kKnobs) {
    (void)file;
    return;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    for (int key = 0; key < kNumContextKeys; ++key) {
      const Context* c = contexts_[key].get();
      if (c == nullptr) continue;
      StateEntry e;
      e.nranks = uint32_t(nranks_);
      e.nnodes = uint32_t(nnodes_);
      e.key = uint32_t(key);
      e.mask = c->mask.bits;
      e.steps = c->steps;
      e.bytes = c->first_bytes;
      std::memcpy(e.prior, c->prior, sizeof e.prior);
      e.policy = c->policy;
      // The latencies still held back are this job's too: the saved state has them (the live policy
      // keeps holding them back).
      for (const typename Context::Arrival& a : c->held)
        if (a.slot >= 0) engine_->update(e.policy, a.slot, a.latency_us);
      file.put(std::move(e));
    }
  }
}

template <int N>
int OnlineLearnerT<N>::import_contexts(const StateFile& file) {
  // The state file holds slot arms only (the caller says so).
  if constexpr (kKnobs) {
    (void)file;
    return 0;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    int restored = 0;
    for (const StateEntry& e : file.entries()) {
      if (e.nranks != uint32_t(nranks_) || e.nnodes != uint32_t(nnodes_) ||
          e.key >= uint32_t(kNumContextKeys))
        continue;
      if (contexts_[e.key]) continue;
      auto c = std::make_unique<Context>();
      c->mask = ArmMask{e.mask}.nccl_arms();
      c->slots = c->mask;
      std::memcpy(c->prior, e.prior, sizeof e.prior);  // NCCL's 21 slots; the rest are never valid
      for (int s = kNumNcclArms; s < kNumArms; ++s) c->prior[s] = -1.0f;
      c->policy = e.policy;  // validated by the state file against this mask and prior
      c->steps = e.steps;
      c->first_bytes = e.bytes;
      c->memo_base = memoize_ ? policy_start_locked(int(e.key)) : 0;  // NCCL's calls stay so
      const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
      c->stream_id = replay_stream_id(key_collective(int(e.key)), nnodes_, gpn, c->first_bytes);
      contexts_[e.key] = std::move(c);
      ++restored;
    }
    return restored;
  }
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(N_)                       \
  template void OnlineLearnerT<N_>::export_contexts(StateFile&) const; \
  template int OnlineLearnerT<N_>::import_contexts(const StateFile&);
NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS

}  // namespace ncclbot::plugin
