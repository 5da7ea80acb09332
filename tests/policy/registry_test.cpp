// The registry (policy/policy.hpp) is the one list every dispatch comes from: each entry must be
// reachable by name through the spec parser, construct the same object through make_policy() as
// through visit_policy(), and decide the same through the union as through its own type.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

struct Entry {
  PolicyKind kind;
  int number;
  std::string name;
  PolicyUse use;
  std::string keys;  // the registry line's keys as written, e.g. "c, n0"
};

std::vector<Entry> registry_entries() {
  std::vector<Entry> out;
#define NCCLBOT_TEST_ENTRY(Kind, number, Type, member, name, use, ...) \
  out.push_back({PolicyKind::Kind, number, name, PolicyUse::use, #__VA_ARGS__});
  NCCLBOT_POLICIES(NCCLBOT_TEST_ENTRY)
#undef NCCLBOT_TEST_ENTRY
  return out;
}

// Each hyperparameter's default as its registry line writes it (the literal, read by strtod here,
// not the parser's formatting of it).
std::map<std::string, double> key_defaults() {
  std::map<std::string, double> out;
#define NCCLBOT_TEST_KEY_DEFAULT(field, type, init, lo, hi) out[#field] = std::strtod(#init, nullptr);
  NCCLBOT_POLICY_KEYS(NCCLBOT_TEST_KEY_DEFAULT)
#undef NCCLBOT_TEST_KEY_DEFAULT
  return out;
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  for (char c : s) {
    if (c == sep) {
      out.push_back(part);
      part.clear();
    } else if (c != ' ') {
      part += c;
    }
  }
  if (!part.empty() || !out.empty()) out.push_back(part);
  return out;
}

Sweep three_arm_sweep() {
  return tiny_sweep({{tiny_context(1, 1024),
                      {{0, {10.0f, 14.0f}, 9.0f}, {2, {12.0f, 11.0f}, 12.0f}, {7, {20.0f, 9.5f}, 15.0f}}}});
}

}  // namespace

// The contract's spellings (docs/architecture.md "Contracts") written out by hand, not read from
// the registry: the policies numbered 0..11 keep these forever (numbers are append-only); a policy
// added later is held to its own registry line by the next test.
TEST(PolicyRegistry, EveryContractNameParsesToItsKindWithKeysInContractOrder) {
  const std::vector<std::pair<std::string, std::string>> contract = {
      {"auto", "auto"},
      {"oracle", "oracle"},
      {"random", "random"},
      {"greedy", "greedy:n0=1"},
      {"egreedy", "egreedy:eps=0.1,decay=0,n0=1"},
      {"ucb1", "ucb1:c=0.1,n0=1"},
      {"thompson", "thompson:n0=1,sigma=0.1"},
      {"etc", "etc:m=1"},
      {"swucb", "swucb:c=0.1,window=100,n0=1"},
      {"knn", "knn:k=5"},
      {"tree", "tree:depth=4"},
      {"ducb", "ducb:c=0.1,gamma=0.99,n0=1"}};
  for (const auto& [name, canonical] : contract) EXPECT_EQ(parse_policy_spec(name).text, canonical) << name;
  for (const Entry& e : registry_entries()) {
    if (e.number < int(contract.size())) {
      EXPECT_EQ(contract[size_t(e.number)].first, e.name) << e.number;
    }
    EXPECT_EQ(parse_policy_spec(e.name).config.kind, e.kind) << e.name;
    EXPECT_EQ(policy_kind_named(e.name), e.kind) << e.name;
    EXPECT_EQ(policy_name(e.kind), e.name);
    EXPECT_EQ(policy_use(e.kind), e.use) << e.name;
  }
  EXPECT_FALSE(policy_kind_named("ucb").has_value());
}

// Every entry's canonical spec at its defaults names its registry line's keys in that order, each
// at the default its key line writes; registered_policies() and live_policies() follow the registry.
TEST(PolicyRegistry, EveryEntrysDefaultSpecWritesItsKeysAtTheirRegistryDefaults) {
  const std::map<std::string, double> defaults = key_defaults();
  std::vector<PolicyKind> all, live;
  for (const Entry& e : registry_entries()) {
    all.push_back(e.kind);
    if (e.use == PolicyUse::kLive) live.push_back(e.kind);
    const std::string spec = default_policy_spec(e.kind);
    const size_t colon = spec.find(':');
    EXPECT_EQ(spec.substr(0, colon), e.name);
    const std::vector<std::string> keys = split_on(e.keys, ',');
    const std::vector<std::string> items =
        colon == std::string::npos ? std::vector<std::string>{} : split_on(spec.substr(colon + 1), ',');
    ASSERT_EQ(items.size(), keys.size()) << spec;
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::vector<std::string> kv = split_on(items[i], '=');
      ASSERT_EQ(kv.size(), 2u) << spec;
      EXPECT_EQ(kv[0], keys[i]) << spec;
      EXPECT_EQ(std::strtod(kv[1].c_str(), nullptr), defaults.at(keys[i])) << spec;
    }
  }
  EXPECT_EQ(registered_policies(), all);
  EXPECT_EQ(live_policies(), live);
}

TEST(PolicyRegistry, OnlyTheOracleAndTheSupervisedSelectorsCannotRunLive) {
  for (const Entry& e : registry_entries()) {
    const bool live = e.name != "oracle" && e.name != "knn" && e.name != "tree";
    EXPECT_EQ(e.use == PolicyUse::kLive, live) << e.name;
    EXPECT_EQ(is_supervised(e.kind), e.name == "knn" || e.name == "tree") << e.name;
  }
}

TEST(PolicyRegistry, SpecValuesReachTheParamsOfTheConstructedPolicy) {
  const PolicyConfig cfg = parse_policy_spec("ducb:c=0.7,gamma=0.5,n0=3").config;
  AnyPolicy any = make_policy(cfg);
  ASSERT_EQ(any.kind, PolicyKind::kDiscountedUcb);
  EXPECT_EQ(any.ducb.params.c, 0.7);
  EXPECT_EQ(any.ducb.params.gamma, 0.5);
  EXPECT_EQ(any.ducb.params.n0, 3.0);
  const PolicyConfig sw = parse_policy_spec("swucb:c=0.2,window=17,n0=0").config;
  visit_policy(sw, [](auto& p) {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, SwUcbPolicy>) {
      EXPECT_EQ(p.params.c, 0.2);
      EXPECT_EQ(p.params.window, 17);
      EXPECT_EQ(p.params.n0, 0.0);
    } else {
      ADD_FAILURE() << "swucb dispatched to another type";
    }
    return 0;
  });
}

// make_policy() constructs its member (no write into an inactive union member, no indeterminate
// field): after reset its bytes equal those of the object the engines build through visit_policy.
TEST(PolicyRegistry, MakePolicyAndTheEngineConstructionGiveIdenticalBytesAfterReset) {
  const Sweep s = three_arm_sweep();
  const PolicyContext ctx = sweep_policy_context(s.view(), 0, 7);
  for (const Entry& e : registry_entries()) {
    PolicyConfig cfg = parse_policy_spec(e.name).config;
    AnyPolicy any = make_policy(cfg);
    ASSERT_EQ(any.kind, e.kind) << e.name;
    policy_reset(any, ctx);
    visit_policy(cfg, [&](auto& typed) {
      typed.reset(ctx);
      with_policy(any, [&](auto& member) {
        if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::decay_t<decltype(typed)>>)
          EXPECT_EQ(std::memcmp(&member, &typed, sizeof typed), 0) << e.name;
        else
          ADD_FAILURE() << e.name << ": union member and visited type differ";
        return 0;
      });
      return 0;
    });
  }
}

// The union form (what the plugin keeps per context) makes the same decisions as the typed form.
TEST(PolicyRegistry, UnionDispatchEqualsTypedDispatchForEveryLivePolicy) {
  const Sweep s = three_arm_sweep();
  const SweepView v = s.view();
  for (const Entry& e : registry_entries()) {
    if (e.use != PolicyUse::kLive) continue;
    PolicyConfig cfg = parse_policy_spec(e.name).config;
    cfg.eps = 0.3;
    const Trace typed = trace_policy(cfg, s, 0, 64, 17, 23);
    AnyPolicy any = make_policy(cfg);
    policy_reset(any, sweep_policy_context(v, 0, -1));
    for (int t = 0; t < 64; ++t) {
      StepRandom rng(17, 23, uint32_t(t));
      const int slot = policy_select(any, rng);
      ASSERT_EQ(slot, typed.picks[size_t(t)]) << e.name << " step " << t;
      policy_update(any, slot, typed.observed[size_t(t)]);
    }
  }
}
