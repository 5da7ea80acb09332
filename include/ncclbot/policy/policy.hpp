#pragma once
// The closed set of policies as plain data (PolicyConfig, CUB-style: a grid is a list of these)
// and a tagged union over their states (AnyPolicy), so device code and the tuner plugin dispatch
// with a switch, never a virtual call. Hot loops dispatch once, outside the loop, through
// visit_policy(), and then run one concrete policy type.
#include <cstdint>

#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/egreedy.hpp"
#include "ncclbot/policy/etc.hpp"
#include "ncclbot/policy/fixed_policy.hpp"
#include "ncclbot/policy/greedy.hpp"
#include "ncclbot/policy/oracle.hpp"
#include "ncclbot/policy/random_policy.hpp"
#include "ncclbot/policy/swucb.hpp"
#include "ncclbot/policy/thompson.hpp"
#include "ncclbot/policy/ucb1.hpp"

namespace ncclbot {

// Stable numbering (it appears in exported tables and plugin state); append only.
enum class PolicyKind : int8_t {
  kAuto = 0,
  kOracle = 1,
  kRandom = 2,
  kGreedy = 3,
  kEpsGreedy = 4,
  kUcb1 = 5,
  kThompson = 6,
  kEtc = 7,
  kSwUcb = 8,
  kKnn = 9,    // supervised: the fitted decision arrives as PolicyContext::fixed_slot
  kTree = 10,  // supervised: idem
};

// Every hyperparameter of every policy; each policy reads only its own keys (DESIGN.md
// "Contracts": greedy:n0, egreedy:eps,decay,n0, ucb1:c,n0, thompson:n0,sigma, etc:m,
// swucb:c,window,n0, knn:k, tree:depth). default_policy_config() gives the documented defaults.
struct PolicyConfig {
  PolicyKind kind = PolicyKind::kAuto;
  double c = 0.1;      // ucb1, swucb: bonus multiplier on the relative scale
  double n0 = 1.0;     // prior pseudo-count; 0 = cold start
  double eps = 0.1;    // egreedy
  double decay = 0.0;  // egreedy: eps_t = eps / (1 + decay t)
  double sigma = 0.1;  // thompson: noise sd of log-latency
  int m = 1;           // etc: probes per arm
  int window = 100;    // swucb: observations kept
  int k = 5;           // knn: neighbours
  int depth = 4;       // tree: maximum depth
};

struct AnyPolicy {
  PolicyKind kind;
  union {
    AutoPolicy auto_;
    OraclePolicy oracle;
    RandomPolicy random;
    GreedyPolicy greedy;
    EpsGreedyPolicy egreedy;
    Ucb1Policy ucb1;
    ThompsonPolicy thompson;
    EtcPolicy etc;
    SwUcbPolicy swucb;
    FixedPolicy fixed;
  };

  NCCLBOT_HD AnyPolicy() : kind(PolicyKind::kAuto), auto_() {}
};

// Calls f(policy) with the concrete policy object for config.kind, its params filled in.
template <typename F>
NCCLBOT_HD auto visit_policy(const PolicyConfig& cfg, F&& f) {
  switch (cfg.kind) {
    case PolicyKind::kOracle: {
      OraclePolicy p{};
      return f(p);
    }
    case PolicyKind::kRandom: {
      RandomPolicy p{};
      return f(p);
    }
    case PolicyKind::kGreedy: {
      GreedyPolicy p{};
      p.params = {cfg.n0};
      return f(p);
    }
    case PolicyKind::kEpsGreedy: {
      EpsGreedyPolicy p{};
      p.params = {cfg.eps, cfg.decay, cfg.n0};
      return f(p);
    }
    case PolicyKind::kUcb1: {
      Ucb1Policy p{};
      p.params = {cfg.c, cfg.n0};
      return f(p);
    }
    case PolicyKind::kThompson: {
      ThompsonPolicy p{};
      p.params = {cfg.n0, cfg.sigma};
      return f(p);
    }
    case PolicyKind::kEtc: {
      EtcPolicy p{};
      p.params = {cfg.m};
      return f(p);
    }
    case PolicyKind::kSwUcb: {
      SwUcbPolicy p{};
      p.params = {cfg.c, cfg.window, cfg.n0};
      return f(p);
    }
    case PolicyKind::kKnn:
    case PolicyKind::kTree: {
      FixedPolicy p{};
      return f(p);
    }
    case PolicyKind::kAuto:
    default: {
      AutoPolicy p{};
      return f(p);
    }
  }
}

// The union form, for callers that keep one state per context between calls (the plugin).
NCCLBOT_HD inline AnyPolicy make_policy(const PolicyConfig& cfg) {
  AnyPolicy a;
  a.kind = cfg.kind;
  switch (cfg.kind) {
    case PolicyKind::kOracle:
      a.oracle = OraclePolicy{};
      break;
    case PolicyKind::kRandom:
      a.random = RandomPolicy{};
      break;
    case PolicyKind::kGreedy:
      a.greedy.params = {cfg.n0};
      break;
    case PolicyKind::kEpsGreedy:
      a.egreedy.params = {cfg.eps, cfg.decay, cfg.n0};
      break;
    case PolicyKind::kUcb1:
      a.ucb1.params = {cfg.c, cfg.n0};
      break;
    case PolicyKind::kThompson:
      a.thompson.params = {cfg.n0, cfg.sigma};
      break;
    case PolicyKind::kEtc:
      a.etc.params = {cfg.m};
      break;
    case PolicyKind::kSwUcb:
      a.swucb.params = {cfg.c, cfg.window, cfg.n0};
      break;
    case PolicyKind::kKnn:
    case PolicyKind::kTree:
      a.fixed = FixedPolicy{};
      break;
    default:
      a.kind = PolicyKind::kAuto;
      a.auto_ = AutoPolicy{};
      break;
  }
  return a;
}

// Applies f to the active member of an AnyPolicy.
template <typename F>
NCCLBOT_HD auto with_policy(AnyPolicy& a, F&& f) {
  switch (a.kind) {
    case PolicyKind::kOracle:
      return f(a.oracle);
    case PolicyKind::kRandom:
      return f(a.random);
    case PolicyKind::kGreedy:
      return f(a.greedy);
    case PolicyKind::kEpsGreedy:
      return f(a.egreedy);
    case PolicyKind::kUcb1:
      return f(a.ucb1);
    case PolicyKind::kThompson:
      return f(a.thompson);
    case PolicyKind::kEtc:
      return f(a.etc);
    case PolicyKind::kSwUcb:
      return f(a.swucb);
    case PolicyKind::kKnn:
    case PolicyKind::kTree:
      return f(a.fixed);
    case PolicyKind::kAuto:
    default:
      return f(a.auto_);
  }
}

NCCLBOT_HD inline void policy_reset(AnyPolicy& a, const PolicyContext& ctx) {
  with_policy(a, [&](auto& p) { p.reset(ctx); });
}
NCCLBOT_HD inline int policy_select(AnyPolicy& a, StepRandom& rng) {
  return with_policy(a, [&](auto& p) { return p.select(rng); });
}
NCCLBOT_HD inline void policy_update(AnyPolicy& a, int slot, double latency_us) {
  with_policy(a, [&](auto& p) { p.update(slot, latency_us); });
}
NCCLBOT_HD inline int policy_commit(AnyPolicy& a, StepRandom& rng) {
  return with_policy(a, [&](auto& p) { return p.commit(rng); });
}

}  // namespace ncclbot
