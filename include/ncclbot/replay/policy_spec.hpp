#pragma once
// Policy specs (docs/architecture.md "Contracts"): `name:key=value,...`, where a `|` list in a value makes a
// grid (the cartesian product of all lists, first key outermost). Names and keys:
//   auto, oracle, random, greedy:n0, egreedy:eps,decay,n0, ucb1:c,n0, thompson:n0,sigma, etc:m,
//   swucb:c,window,n0, knn:k, tree:depth, ducb:c,gamma,n0
// (generated from the registry in policy/policy.hpp).
// The same strings come from the command line, from TOML studies and from NCCLBOT_POLICY.
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/policy/policy.hpp"

namespace ncclbot {

struct PolicySpec {
  std::string text;  // canonical: every key of the policy, in contract order, e.g. "ucb1:c=0.1,n0=4"
  PolicyConfig config;
};

// Expands one spec (possibly a grid) into its points. Unknown policy, unknown or repeated key, or a
// value out of range: UsageError naming the spec and listing what is valid.
std::vector<PolicySpec> parse_policy_grid(std::string_view spec);
// One point only (a `|` is an error): what the plugin and `plugin-check` take.
PolicySpec parse_policy_spec(std::string_view spec);

std::string_view policy_name(PolicyKind kind);
std::string policy_names_list();  // "auto, oracle, random, ..."
bool is_supervised(PolicyKind kind);
// The documented defaults of `kind` (what a key left out of a spec takes).
PolicyConfig default_policy_config(PolicyKind kind);

}  // namespace ncclbot
