#pragma once
// The policy registry: every policy is one header (policy/*.hpp, the interface in
// policy_context.hpp) plus one line in NCCLBOT_POLICIES below, and every hyperparameter one line
// in NCCLBOT_POLICY_KEYS. Everything that dispatches on a policy kind is generated from these two
// lists (one list, many dispatches, as CUB's policy hubs and NCCL's own X-macro tables):
//   - PolicyKind and PolicyConfig (plain data, CUB-style: a grid is a list of these);
//   - visit_policy() (the typed dispatch hot loops run once, outside the loop), make_policy() and
//     with_policy() over AnyPolicy (the tagged union the plugin keeps per context);
//   - the spec parser's names and keys (src/replay/policy_spec.cpp), the kernel launcher
//     (kernels/replay_kernel.cuh) and what the plugin may run live (policy_use(), live_policies());
//   - what `ncclbot bench` and plugin_overhead_bench time, and so the rows of
//     data/plugin_call_costs.csv (what scoring "as deployed" charges), and the registry test.
// docs/replay.md "Adding a policy" walks through it; tests/policy/toy adds a toy policy.
#include <cstdint>
#include <new>
#include <type_traits>

#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/autoccl.hpp"
#include "ncclbot/policy/ducb.hpp"
#include "ncclbot/policy/egreedy.hpp"
#include "ncclbot/policy/explore_then_commit.hpp"
#include "ncclbot/policy/frozen_arm_policy.hpp"
#include "ncclbot/policy/greedy.hpp"
#include "ncclbot/policy/oracle.hpp"
#include "ncclbot/policy/osub.hpp"
#include "ncclbot/policy/random_policy.hpp"
#include "ncclbot/policy/swucb.hpp"
#include "ncclbot/policy/thompson.hpp"
#include "ncclbot/policy/ucb1.hpp"
#include "ncclbot/policy/uts.hpp"

// A build may register policies of its own without editing this file (the toy policy's test build
// does, tests/policy/toy/): NCCLBOT_EXTRA_POLICY_HEADER names a header that includes the policy and
// defines NCCLBOT_EXTRA_POLICIES(X) and NCCLBOT_EXTRA_POLICY_KEYS(K), lines in the forms below.
#ifdef NCCLBOT_EXTRA_POLICY_HEADER
#include NCCLBOT_EXTRA_POLICY_HEADER
#endif
#ifndef NCCLBOT_EXTRA_POLICIES
#define NCCLBOT_EXTRA_POLICIES(X)
#endif
#ifndef NCCLBOT_EXTRA_POLICY_KEYS
#define NCCLBOT_EXTRA_POLICY_KEYS(K)
#endif

namespace ncclbot {

// Hyperparameters: K(field, type, default, min, max). Fields of PolicyConfig, spec keys of the
// same name (docs/architecture.md "Contracts"), range-checked by the parser (integers for int fields).
#define NCCLBOT_POLICY_KEYS(K)                                           \
  K(c, double, 0.1, 0.0, 1e6)             /* UCB bonus multiplier */     \
  K(n0, double, 1.0, 0.0, 1e9)            /* prior pseudo-count */       \
  K(eps, double, 0.1, 0.0, 1.0)           /* egreedy */                  \
  K(decay, double, 0.0, 0.0, 1e15)        /* egreedy: eps/(1+decay t) */ \
  K(sigma, double, 0.1, 1e-9, 1e3)        /* thompson, uts: noise sd */  \
  K(gamma, double, 0.99, 1e-6, 1.0)       /* ducb discount per call */   \
  K(m, int, 1, 1, 1e6)                    /* etc probes per arm */       \
  K(window, int, 100, 1, kSwUcbMaxWindow) /* swucb */                    \
  K(k, int, 5, 1, 1e6)                    /* knn neighbours */           \
  K(depth, int, 4, 1, 32)                 /* tree depth */               \
  K(pretrain, int, 360, 0, 1e6)           /* autoccl sampling calls */   \
  K(train, int, 240, 0, 1e6)              /* autoccl descent calls */    \
  NCCLBOT_EXTRA_POLICY_KEYS(K)

// What a policy needs to run: live (in the plugin, from NCCL's cost table and measured latencies),
// the replay's ground truth (the oracle), or a model fitted on tune contexts (supervised).
enum class PolicyUse : int8_t { kLive, kGroundTruth, kSupervised };

// Policies: X(Kind, number, Type, member, "name", use, keys...). Type is the policy's class template
// over N, the arms a context may hold (policy_context.hpp): Type<kNumArms> for NCCL's slots, larger
// N for a knob sweep's arms. The number is stable (it appears in exported tables and plugin state):
// append only. `keys` are the spec's keys in contract order and, for a policy with parameters, the
// fields of Type::Params in declaration order.
#define NCCLBOT_POLICIES(X)                                                                \
  X(kAuto, 0, AutoPolicyT, auto_, "auto", kLive)                                           \
  X(kOracle, 1, OraclePolicyT, oracle, "oracle", kGroundTruth)                             \
  X(kRandom, 2, RandomPolicyT, random, "random", kLive)                                    \
  X(kGreedy, 3, GreedyPolicyT, greedy, "greedy", kLive, n0)                                \
  X(kEpsGreedy, 4, EpsGreedyPolicyT, egreedy, "egreedy", kLive, eps, decay, n0)            \
  X(kUcb1, 5, Ucb1PolicyT, ucb1, "ucb1", kLive, c, n0)                                     \
  X(kThompson, 6, ThompsonPolicyT, thompson, "thompson", kLive, n0, sigma)                 \
  X(kExploreThenCommit, 7, ExploreThenCommitPolicyT, explore_then_commit, "etc", kLive, m) \
  X(kSwUcb, 8, SwUcbPolicyT, swucb, "swucb", kLive, c, window, n0)                         \
  X(kKnn, 9, FrozenArmPolicyT, knn, "knn", kSupervised, k)                                 \
  X(kTree, 10, FrozenArmPolicyT, tree, "tree", kSupervised, depth)                         \
  X(kDiscountedUcb, 11, DiscountedUcbPolicyT, ducb, "ducb", kLive, c, gamma, n0)           \
  X(kOsub, 12, OsubPolicyT, osub, "osub", kLive, c, n0)                                    \
  X(kAutoccl, 13, AutocclPolicyT, autoccl, "autoccl", kLive, pretrain, train)              \
  X(kUts, 14, UtsPolicyT, uts, "uts", kLive, n0, sigma)                                    \
  NCCLBOT_EXTRA_POLICIES(X)

#define NCCLBOT_POLICY_ENUMERATOR(Kind, number, ...) Kind = number,
enum class PolicyKind : int8_t { NCCLBOT_POLICIES(NCCLBOT_POLICY_ENUMERATOR) };
#undef NCCLBOT_POLICY_ENUMERATOR

// Every hyperparameter of every policy; each policy reads only its own keys.
struct PolicyConfig {
  PolicyKind kind = PolicyKind::kAuto;
#define NCCLBOT_POLICY_FIELD(field, type, init, lo, hi) type field = init;
  NCCLBOT_POLICY_KEYS(NCCLBOT_POLICY_FIELD)
#undef NCCLBOT_POLICY_FIELD
};

namespace detail {

// Type::Params from the config's fields named in the policy's registry line (none: empty Params).
// The leading int only absorbs the comma the field list starts with.
template <typename Policy, typename... Values>
NCCLBOT_HD typename Policy::Params params_from(int, Values... values) {
  if constexpr (std::is_empty_v<typename Policy::Params>)
    return typename Policy::Params{};
  else
    return typename Policy::Params{values...};
}

}  // namespace detail

#define NCCLBOT_POLICY_CONFIG_FIELD(key) , cfg.key
#define NCCLBOT_POLICY_CONFIG_FIELDS(...) \
  __VA_OPT__(NCCLBOT_POLICY_FOR_EACH(NCCLBOT_POLICY_CONFIG_FIELD, __VA_ARGS__))
// Up to four keys per policy (add an arm here for a fifth).
#define NCCLBOT_POLICY_FOR_EACH(M, ...)                                                           \
  NCCLBOT_POLICY_FE_PICK(__VA_ARGS__, NCCLBOT_POLICY_FE4, NCCLBOT_POLICY_FE3, NCCLBOT_POLICY_FE2, \
                         NCCLBOT_POLICY_FE1)                                                      \
  (M, __VA_ARGS__)
#define NCCLBOT_POLICY_FE_PICK(a, b, c, d, name, ...) name
#define NCCLBOT_POLICY_FE1(M, a) M(a)
#define NCCLBOT_POLICY_FE2(M, a, b) M(a) M(b)
#define NCCLBOT_POLICY_FE3(M, a, b, c) M(a) M(b) M(c)
#define NCCLBOT_POLICY_FE4(M, a, b, c, d) M(a) M(b) M(c) M(d)

// Calls f(policy) with a fresh policy object of cfg.kind, its params filled in (state is set by
// reset()). An unknown kind plays AUTO.
template <int N = kNumArms, typename F>
NCCLBOT_HD auto visit_policy(const PolicyConfig& cfg, F&& f) {
  switch (cfg.kind) {
#define NCCLBOT_POLICY_VISIT(Kind, number, Type, member, name, use, ...)                  \
  case PolicyKind::Kind: {                                                                \
    Type<N> p{};                                                                          \
    p.params = detail::params_from<Type<N>>(0 NCCLBOT_POLICY_CONFIG_FIELDS(__VA_ARGS__)); \
    return f(p);                                                                          \
  }
    NCCLBOT_POLICIES(NCCLBOT_POLICY_VISIT)
#undef NCCLBOT_POLICY_VISIT
    default: {
      AutoPolicyT<N> p{};
      return f(p);
    }
  }
}

// The union form, for callers that keep one state per context between calls (the plugin). Only
// make_policy() changes the active member, by constructing it; with_policy() reads `kind`.
template <int N>
struct AnyPolicyT {
  PolicyKind kind;
  union {
#define NCCLBOT_POLICY_MEMBER(Kind, number, Type, member, ...) Type<N> member;
    NCCLBOT_POLICIES(NCCLBOT_POLICY_MEMBER)
#undef NCCLBOT_POLICY_MEMBER
  };

  NCCLBOT_HD AnyPolicyT() : kind(PolicyKind::kAuto), auto_() {}
};
using AnyPolicy = AnyPolicyT<kNumArms>;
static_assert(std::is_trivially_copyable_v<AnyPolicy>, "policy state is plain data");

// Applies f to the active member of an AnyPolicy.
template <int N, typename F>
NCCLBOT_HD auto with_policy(AnyPolicyT<N>& a, F&& f) {
  switch (a.kind) {
#define NCCLBOT_POLICY_WITH(Kind, number, Type, member, ...) \
  case PolicyKind::Kind:                                     \
    return f(a.member);
    NCCLBOT_POLICIES(NCCLBOT_POLICY_WITH)
#undef NCCLBOT_POLICY_WITH
    default:
      return f(a.auto_);
  }
}

// A value-initialised policy of cfg.kind (every state member zero, params from cfg) as the active
// member: the same object visit_policy() hands out.
template <int N = kNumArms>
NCCLBOT_HD AnyPolicyT<N> make_policy(const PolicyConfig& cfg) {
  AnyPolicyT<N> a;
  switch (cfg.kind) {
#define NCCLBOT_POLICY_MAKE(Kind, number, Type, member, name, use, ...)                          \
  case PolicyKind::Kind:                                                                         \
    a.kind = PolicyKind::Kind;                                                                   \
    new (&a.member) Type<N>{};                                                                   \
    a.member.params = detail::params_from<Type<N>>(0 NCCLBOT_POLICY_CONFIG_FIELDS(__VA_ARGS__)); \
    break;
    NCCLBOT_POLICIES(NCCLBOT_POLICY_MAKE)
#undef NCCLBOT_POLICY_MAKE
    default:
      break;  // AUTO, as constructed
  }
  return a;
}

NCCLBOT_HD inline PolicyUse policy_use(PolicyKind kind) {
  switch (kind) {
#define NCCLBOT_POLICY_USE(Kind, number, Type, member, name, use, ...) \
  case PolicyKind::Kind:                                               \
    return PolicyUse::use;
    NCCLBOT_POLICIES(NCCLBOT_POLICY_USE)
#undef NCCLBOT_POLICY_USE
    default:
      return PolicyUse::kLive;
  }
}

// Whether a policy needs the latencies of its calls, so the tuner plugin running it watches them
// (deployed/observation_cost.hpp): every live policy but AUTO and random, which learn nothing.
NCCLBOT_HD inline bool policy_watches(PolicyKind kind) {
  return policy_use(kind) == PolicyUse::kLive && kind != PolicyKind::kAuto && kind != PolicyKind::kRandom;
}

template <int N>
NCCLBOT_HD void policy_reset(AnyPolicyT<N>& a, const PolicyContextT<N>& ctx) {
  with_policy(a, [&](auto& p) { p.reset(ctx); });
}
template <int N>
NCCLBOT_HD int policy_select(AnyPolicyT<N>& a, StepRandom& rng) {
  return with_policy(a, [&](auto& p) { return p.select(rng); });
}
// select() with decisions pending (policy_context.hpp, PendingPulls): select_pending() where the
// policy has one and something is pending, else select().
template <int N>
NCCLBOT_HD int policy_select_pending(AnyPolicyT<N>& a, StepRandom& rng, const PendingPullsT<N>& pending) {
  return with_policy(a, [&](auto& p) { return select_pending_with(p, rng, SelectAids{}, pending); });
}
template <int N>
NCCLBOT_HD void policy_update(AnyPolicyT<N>& a, int slot, double latency_us) {
  with_policy(a, [&](auto& p) { p.update(slot, latency_us); });
}
template <int N>
NCCLBOT_HD int policy_commit(AnyPolicyT<N>& a, StepRandom& rng) {
  return with_policy(a, [&](auto& p) { return p.commit(rng); });
}

// The probability with which select() returned `slot`, asked in the same state, before update()
// (the decision log's propensity, docs/ope.md). Every policy declares kDeterministic: true gives 1;
// a randomised policy gives its propensity(slot), or NaN when it has none (Thompson sampling,
// whose probability has no closed form).
template <typename P>
NCCLBOT_HD double propensity_of(const P& p, int slot) {
  if constexpr (P::kDeterministic) {
    return 1.0;
  } else if constexpr (requires { p.propensity(slot); }) {
    return p.propensity(slot);
  } else {
    return __builtin_nan("");
  }
}
template <int N>
NCCLBOT_HD double policy_propensity(AnyPolicyT<N>& a, int slot) {
  return with_policy(a, [&](auto& p) { return propensity_of(p, slot); });
}
// select() and the propensity of its answer together: the same decision as policy_select(), with
// a policy's select_logged() where it has one (a cheaper path to the same probability). A policy
// whose probability is an integral (Thompson sampling, contest()) states it at once only where it
// is exact and free (1: no other arm can win); otherwise, when `deferred` is given, it says NaN and
// `deferred` holds the contest, for thompson_win_probability() to compute off the hot path (without
// `deferred`, the integral is computed now).
template <typename P, typename Contest>
NCCLBOT_HD int select_logged_of(P& p, StepRandom& rng, double* probability, Contest* deferred) {
  if constexpr (requires { p.select_logged(rng, probability, deferred); }) {
    return p.select_logged(rng, probability, deferred);
  } else if constexpr (requires { p.select_logged(rng, probability); }) {
    return p.select_logged(rng, probability);
  } else {
    const int slot = p.select(rng);
    *probability = propensity_of(p, slot);
    return slot;
  }
}
template <int N>
NCCLBOT_HD int policy_select_logged(AnyPolicyT<N>& a, StepRandom& rng, double* probability,
                                    ThompsonContestT<N>* deferred = nullptr) {
  return with_policy(a, [&](auto& p) { return select_logged_of(p, rng, probability, deferred); });
}

// policy_select_logged() with decisions pending: a randomised pending-aware policy says its own
// probability (select_pending_logged()); a deterministic one with select_pending() has probability 1
// (asserted); the others decide and log as without pending.
template <int N>
NCCLBOT_HD int policy_select_pending_logged(AnyPolicyT<N>& a, StepRandom& rng,
                                            const PendingPullsT<N>& pending, double* probability,
                                            ThompsonContestT<N>* deferred = nullptr) {
  if (pending.total == 0) return policy_select_logged(a, rng, probability, deferred);
  return with_policy(a, [&](auto& p) {
    if constexpr (requires { p.select_pending_logged(rng, pending, probability, deferred); }) {
      return p.select_pending_logged(rng, pending, probability, deferred);
    } else if constexpr (requires { p.select_pending_logged(rng, pending, probability); }) {
      return p.select_pending_logged(rng, pending, probability);
    } else if constexpr (requires { p.select_pending(rng, pending); }) {
      static_assert(std::remove_reference_t<decltype(p)>::kDeterministic,
                    "a randomised pending-aware policy says its probability (select_pending_logged)");
      *probability = 1.0;
      return p.select_pending(rng, pending);
    } else {
      return select_logged_of(p, rng, probability, deferred);
    }
  });
}

}  // namespace ncclbot
