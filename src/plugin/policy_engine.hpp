#pragma once
// The bridge from the plugin to the shared policy headers: the parsed NCCLBOT_POLICY spec, the
// seed, and the three calls a replay makes (reset from a context, select with the step's Philox
// words, with or without decisions pending, update with a latency). No policy logic lives here;
// it is include/ncclbot/policy.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/policy/watch_rule.hpp"
#include "ncclbot/replay/stream_id.hpp"

namespace ncclbot::plugin {

using PolicyState = AnyPolicy;

class PolicyEngine {
 public:
  // nullptr + `error` for a bad spec; never throws.
  static std::shared_ptr<const PolicyEngine> create(const std::string& spec, uint64_t seed,
                                                    std::string* error);

  const std::string& spec() const { return spec_; }
  uint64_t seed() const { return seed_; }
  PolicyKind kind() const { return config_.kind; }
  // `@slots`: over knob arms, the policy chooses among those at NCCL's own channels and chunk size.
  bool slots_only() const { return slots_only_; }
  // `@watch`: which calls the plugin watches (policy/watch_rule.hpp; docs/plugin.md "The cost of
  // watching"); by default every one.
  const WatchRule& watch() const { return watch_; }
  bool watches_fewer() const { return !watches_every_call(watch_); }
  // Whether a logged decision may leave its propensity to the log's writer thread (a contest).
  bool defers_propensity() const {
    bool defers = false;
    visit_policy(config_, [&](auto& p) {
      using P = std::decay_t<decltype(p)>;
      defers = requires(P q, StepRandom r, double d, ThompsonContest c) {
        q.select_logged(r, &d, &c);
      };
    });
    return defers;
  }
  // Identifies policy + hyperparameters (the canonical spec), for the state file.
  uint64_t fingerprint() const { return fingerprint_; }

  void reset(PolicyState& state, ArmMask mask, const float* prior_us) const {
    PolicyContext ctx;
    ctx.mask = mask;
    ctx.prior_us = prior_us;
    reset(state, ctx);
  }
  // The same for a context of any capacity N (knob mode: its arms named in ctx.arms).
  template <int N>
  void reset(AnyPolicyT<N>& state, const PolicyContextT<N>& ctx) const {
    state = make_policy<N>(config_);
    // The active member value-initialised with its parameters, so nothing in it (UCB1's bonus
    // table pointer included) is left indeterminate.
    visit_policy<N>(config_, [&](auto& fresh) {
      with_policy(state, [&](auto& member) {
        if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::decay_t<decltype(fresh)>>)
          member = fresh;
      });
    });
    policy_reset(state, ctx);
  }
  // The step counter is 64-bit; the Philox key takes its low 32 bits, as the replay engine does
  // (its horizons never reach 2^32).
  int select(PolicyState& state, uint64_t stream_id, uint64_t step) const {
    StepRandom rng(seed_, stream_id, uint32_t(step));
    return policy_select(state, rng);
  }
  // select() and the probability of its answer (the decision log, docs/ope.md); NaN with the
  // contest in `deferred` where the probability is an integral left for the log's writer thread.
  int select_logged(PolicyState& state, uint64_t stream_id, uint64_t step, double* probability,
                    ThompsonContest* deferred) const {
    StepRandom rng(seed_, stream_id, uint32_t(step));
    return policy_select_logged(state, rng, probability, deferred);
  }
  // select() and select_logged() with decisions pending (PendingPulls: the leader's decisions whose
  // latencies have not reached the policy, docs/plugin.md "Decision windows"): the same Philox step,
  // and with nothing pending the same answer bit for bit.
  template <int N>
  int select_pending(AnyPolicyT<N>& state, uint64_t stream_id, uint64_t step,
                     const PendingPullsT<N>& pending) const {
    StepRandom rng(seed_, stream_id, uint32_t(step));
    return policy_select_pending(state, rng, pending);
  }
  template <int N>
  int select_pending_logged(AnyPolicyT<N>& state, uint64_t stream_id, uint64_t step,
                            const PendingPullsT<N>& pending, double* probability,
                            ThompsonContestT<N>* deferred) const {
    StepRandom rng(seed_, stream_id, uint32_t(step));
    return policy_select_pending_logged(state, rng, pending, probability, deferred);
  }
  template <int N>
  void update(AnyPolicyT<N>& state, int slot, double latency_us) const {
    policy_update(state, slot, latency_us);
  }

 private:
  PolicyConfig config_;
  std::string spec_;
  uint64_t seed_ = 0;
  uint64_t fingerprint_ = 0;
  bool slots_only_ = false;
  WatchRule watch_{};
};

}  // namespace ncclbot::plugin
