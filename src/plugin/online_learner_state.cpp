// A learner's contexts to and from the state file (state_file.hpp keeps the format).
#include "plugin/online_learner.hpp"

#include <cstring>

#include "ncclbot/replay/replay.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

template <int N>
void OnlineLearnerT<N>::export_contexts(StateFileT<N>& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int key = 0; key < kNumContextKeys; ++key) {
    const Context* c = contexts_[key].get();
    if (c == nullptr || (kKnobs && c->arms.empty())) continue;  // no arms: nothing learned
    StateEntryT<N> e = StateEntryT<N>::of(nranks_, nnodes_, key, c->slots, c->slot_prior, c->steps,
                                          c->first_bytes, c->policy);
    // The latencies still held back are this job's too: the saved state has them (the live policy
    // keeps holding them back).
    for (const typename Context::Arrival& a : c->held)
      if (a.slot >= 0) engine_->update(e.policy, a.slot, a.latency_us);
    file.put(std::move(e));
  }
}

template <int N>
int OnlineLearnerT<N>::import_contexts(const StateFileT<N>& file) {
  std::lock_guard<std::mutex> lock(mu_);
  int restored = 0;
  for (const StateEntryT<N>& e : file.entries()) {
    if (e.nranks != uint32_t(nranks_) || e.nnodes != uint32_t(nnodes_) || e.key >= uint32_t(kNumContextKeys))
      continue;
    if (contexts_[e.key]) continue;
    auto c = std::make_unique<Context>();
    // The context as its first table seeded it (knob arms: the same crossing, the file's lists being
    // this learner's), then the saved policy, validated by the state file against those arms.
    float prior[kNumArms];
    prior_of_nccl_costs(e.prior, prior);
    seed_locked(*c, int(e.key), e.bytes, prior);
    c->policy = e.policy;
    c->steps = e.steps;
    c->memo_base = memoize_ ? policy_start_locked(int(e.key)) : 0;  // NCCL's calls stay so
    contexts_[e.key] = std::move(c);
    ++restored;
  }
  return restored;
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(N_)                            \
  template void OnlineLearnerT<N_>::export_contexts(StateFileT<N_>&) const; \
  template int OnlineLearnerT<N_>::import_contexts(const StateFileT<N_>&);
NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_STATE_MEMBERS

}  // namespace ncclbot::plugin
