#pragma once
// Policy specs (docs/architecture.md "Contracts"): `name:key=value,...`, where a `|` list in a value makes a
// grid (the cartesian product of all lists, first key outermost); modifiers after it, in any order:
// `@slots` keeps the policy to NCCL's own knob settings (PolicySpec::slots_only), `@conservative`
// keeps its cumulative latency near NCCL's default (PolicySpec::conservative), `@watch` watches fewer
// calls once an arm is known (PolicySpec::watch). The names and keys are the
// registry's (policy/policy.hpp); policy_names_list() and the parser's messages list them.
// The same strings come from the command line, from TOML studies and from NCCLBOT_POLICY.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/policy/conservative.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/policy/watch_rule.hpp"

namespace ncclbot {

struct PolicySpec {
  std::string text;  // canonical: every key of the policy, in contract order, e.g. "ucb1:c=0.1,n0=4"
  PolicyConfig config;
  // `@slots` after the spec: the policy chooses among the arms at NCCL's own channels and chunk size
  // only (one per algorithm and protocol), in a knob sweep as in a slot sweep, where it changes
  // nothing; the losses are still priced against every arm.
  bool slots_only = false;
  // `@conservative[:alpha=A,delta=D,noise=R,worst=W]` after the spec: the policy runs inside the conservative
  // wrapper (policy/conservative.hpp), never much worse than NCCL's default; CPU engines only.
  std::optional<ConservativeParams> conservative;
  // `@watch[:full=K,floor=F]` after the spec: which calls are watched (policy/watch_rule.hpp); without
  // it every call is. CPU engines only.
  std::optional<WatchRule> watch;
};

// Expands one spec (possibly a grid) into its points. Unknown policy, unknown or repeated key, or a
// value out of range: UsageError naming the spec and listing what is valid.
std::vector<PolicySpec> parse_policy_grid(std::string_view spec);
// One point only (a `|` is an error): what the plugin and `plugin-check` take.
PolicySpec parse_policy_spec(std::string_view spec);
// Why `spec` cannot run where the policy runs bare, without the replay engines' wrapper (the tuner
// plugin, `plugin-check`, `ope`), or an empty string: `@conservative` and `@watch` are honoured by the
// CPU replay engines only, and running the policy without them would drop them without a word.
std::string replay_only_modifier(const PolicySpec& spec);

std::string_view policy_name(PolicyKind kind);
std::optional<PolicyKind> policy_kind_named(std::string_view name);  // nullopt: no such policy
std::string policy_names_list();                                     // "auto, oracle, random, ..."
bool is_supervised(PolicyKind kind);
// The documented defaults of `kind` (what a key left out of a spec takes).
PolicyConfig default_policy_config(PolicyKind kind);

// Every registered policy in registry order, and those of them the plugin can run live.
std::vector<PolicyKind> registered_policies();
std::vector<PolicyKind> live_policies();
// The canonical spec of `kind` at its defaults, every key written out: "ucb1:c=0.1,n0=1".
std::string default_policy_spec(PolicyKind kind);

}  // namespace ncclbot
