#include "ncclbot/replay/policy_spec.hpp"

#include <cmath>
#include <functional>
#include <type_traits>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot {
namespace {

struct KeyInfo {
  const char* key;
  bool integer;
  double min, max;
  std::function<void(PolicyConfig&, double)> set;
  std::function<double(const PolicyConfig&)> get;
};

// The key table and the policy table, both generated from the registry (policy/policy.hpp).
const std::vector<KeyInfo>& key_table() {
  static const std::vector<KeyInfo> table = {
#define NCCLBOT_KEY_INFO(field, type, init, lo, hi)             \
  KeyInfo{#field,                                               \
          std::is_integral_v<type>,                             \
          double(lo),                                           \
          double(hi),                                           \
          [](PolicyConfig& c, double v) { c.field = type(v); }, \
          [](const PolicyConfig& c) { return double(c.field); }},
      NCCLBOT_POLICY_KEYS(NCCLBOT_KEY_INFO)
#undef NCCLBOT_KEY_INFO
  };
  return table;
}

std::vector<std::string> split(std::string_view s, char sep);

struct PolicyInfo {
  const char* name;
  PolicyKind kind;
  std::vector<const KeyInfo*> keys;  // contract order
};

// "c, n0" (the registry line's keys, stringified) -> the key table's entries, in that order.
std::vector<const KeyInfo*> keys_named(std::string_view names) {
  std::vector<const KeyInfo*> out;
  if (names.empty()) return out;
  for (const std::string& name : split(names, ','))
    for (const KeyInfo& k : key_table())
      if (name == k.key) out.push_back(&k);
  return out;
}

const std::vector<PolicyInfo>& policy_table() {
  static const std::vector<PolicyInfo> table = {
#define NCCLBOT_POLICY_INFO(Kind, number, Type, member, name, use, ...) \
  PolicyInfo{name, PolicyKind::Kind, keys_named(#__VA_ARGS__)},
      NCCLBOT_POLICIES(NCCLBOT_POLICY_INFO)
#undef NCCLBOT_POLICY_INFO
  };
  return table;
}

std::string trim_blanks(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim_blanks(s.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

std::string format_value(const KeyInfo& key, double v) {
  return key.integer ? std::to_string(int64_t(v)) : format_double(v);
}

std::string keys_list(const PolicyInfo& info) {
  if (info.keys.empty()) return "none";
  std::string s;
  for (const KeyInfo* k : info.keys) s += (s.empty() ? "" : ", ") + std::string(k->key);
  return s;
}

}  // namespace

std::string_view policy_name(PolicyKind kind) {
  for (const auto& p : policy_table())
    if (p.kind == kind) return p.name;
  return "?";
}

std::optional<PolicyKind> policy_kind_named(std::string_view name) {
  for (const auto& p : policy_table())
    if (name == p.name) return p.kind;
  return std::nullopt;
}

std::string policy_names_list() {
  std::string s;
  for (const auto& p : policy_table()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

bool is_supervised(PolicyKind kind) {
  return policy_use(kind) == PolicyUse::kSupervised;
}

PolicyConfig default_policy_config(PolicyKind kind) {
  PolicyConfig c;  // field defaults are the documented ones (policy.hpp)
  c.kind = kind;
  return c;
}

std::vector<PolicyKind> registered_policies() {
  std::vector<PolicyKind> out;
  for (const auto& p : policy_table()) out.push_back(p.kind);
  return out;
}

std::vector<PolicyKind> live_policies() {
  std::vector<PolicyKind> out;
  for (const auto& p : policy_table())
    if (policy_use(p.kind) == PolicyUse::kLive) out.push_back(p.kind);
  return out;
}

std::string default_policy_spec(PolicyKind kind) {
  return parse_policy_spec(policy_name(kind)).text;
}

namespace {

// The points of one spec without its arm space (parse_policy_grid).
std::vector<PolicySpec> parse_policy_points(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = trim_blanks(std::string_view(spec).substr(0, colon));
  const PolicyInfo* info = nullptr;
  for (const auto& p : policy_table())
    if (name == p.name) info = &p;
  if (!info)
    throw UsageError("policy spec '" + spec + "': unknown policy '" + name +
                     "' (valid: " + policy_names_list() + ")");

  // Values per key (contract order); keys left out take the default.
  std::vector<std::vector<std::pair<double, std::string>>> values(info->keys.size());
  if (colon != std::string::npos) {
    const std::string body = spec.substr(colon + 1);
    if (trim_blanks(body).empty()) throw UsageError("policy spec '" + spec + "': nothing after ':'");
    for (const std::string& item : split(body, ',')) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos)
        throw UsageError("policy spec '" + spec + "': '" + item + "' is not key=value (keys of " + name +
                         ": " + keys_list(*info) + ")");
      const std::string key = trim_blanks(std::string_view(item).substr(0, eq));
      size_t ki = info->keys.size();
      for (size_t i = 0; i < info->keys.size(); ++i)
        if (key == info->keys[i]->key) ki = i;
      if (ki == info->keys.size())
        throw UsageError("policy spec '" + spec + "': unknown parameter '" + key + "' for " + name +
                         " (valid: " + keys_list(*info) + ")");
      if (!values[ki].empty())
        throw UsageError("policy spec '" + spec + "': parameter '" + key + "' given twice");
      const KeyInfo& k = *info->keys[ki];
      for (const std::string& text : split(std::string_view(item).substr(eq + 1), '|')) {
        const auto v = parse_double(text);
        if (!v || !std::isfinite(*v) || *v < k.min || *v > k.max || (k.integer && *v != std::floor(*v)))
          throw UsageError("policy spec '" + spec + "': " + key + "='" + text + "' must be " +
                           (k.integer ? "an integer" : "a number") + " in [" + format_value(k, k.min) + ", " +
                           format_value(k, k.max) + "]");
        values[ki].push_back({*v, text});
      }
    }
  }
  const PolicyConfig defaults = default_policy_config(info->kind);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].empty()) {
      const double v = info->keys[i]->get(defaults);
      values[i].push_back({v, format_value(*info->keys[i], v)});
    }

  // Cartesian product, first key outermost.
  std::vector<PolicySpec> out;
  std::vector<size_t> idx(values.size(), 0);
  while (true) {
    PolicySpec point;
    point.config = defaults;
    point.text = name;
    for (size_t i = 0; i < values.size(); ++i) {
      info->keys[i]->set(point.config, values[i][idx[i]].first);
      point.text += i == 0 ? ':' : ',';
      point.text += info->keys[i]->key;
      point.text += '=';
      point.text += values[i][idx[i]].second;
    }
    out.push_back(std::move(point));
    size_t i = values.size();
    while (i > 0 && ++idx[i - 1] == values[i - 1].size()) idx[--i] = 0;
    if (i == 0) break;
  }
  return out;
}

}  // namespace

namespace {

// One numeric option of a modifier (`@name:key=value,...`): its field and range.
struct ModifierKey {
  const char* name;
  double* field;
  double lo, hi;
  bool open_lo;        // lo itself is out of range
  bool whole = false;  // an integer
};

// The options of `modifier` (`name` or `name:key=value,...`) into their fields: one value per key,
// each in range; keys left out keep their values. `valid` lists the keys for messages.
template <size_t K>
void parse_modifier_options(const std::string& whole, const std::string& modifier, const std::string& name,
                            const ModifierKey (&keys)[K], const std::string& valid) {
  const size_t colon = modifier.find(':');
  if (colon == std::string::npos) return;
  bool seen[K] = {};
  for (const std::string& item : split(std::string_view(modifier).substr(colon + 1), ',')) {
    const size_t eq = item.find('=');
    const std::string key = trim_blanks(std::string_view(item).substr(0, eq));
    size_t ki = K;
    for (size_t i = 0; i < K; ++i)
      if (key == keys[i].name) ki = i;
    if (eq == std::string::npos || ki == K)
      throw UsageError("policy spec '" + whole + "': '" + item + "' is no @" + name +
                       " option (valid: " + valid + ")");
    if (seen[ki]) throw UsageError("policy spec '" + whole + "': @" + name + "'s " + key + " given twice");
    seen[ki] = true;
    const std::string text = trim_blanks(std::string_view(item).substr(eq + 1));
    const auto v = parse_double(text);
    const ModifierKey& k = keys[ki];
    if (!v || !std::isfinite(*v) || *v > k.hi || (k.open_lo ? *v <= k.lo : *v < k.lo) ||
        (k.whole && *v != std::floor(*v)))
      throw UsageError("policy spec '" + whole + "': @" + name + "'s " + key + "='" + text + "' must be " +
                       (k.whole ? "an integer" : "a number") + " in " + (k.open_lo ? "(" : "[") +
                       format_double(k.lo) + ", " + format_double(k.hi) +
                       "] (one value: a grid is written as several specs)");
    *k.field = *v;
  }
}

// `conservative` or `conservative:alpha=A,delta=D,noise=R,worst=W` (policy/conservative.hpp).
ConservativeParams parse_conservative(const std::string& whole, const std::string& modifier) {
  ConservativeParams p;
  const ModifierKey keys[] = {{"alpha", &p.alpha, 0.0, 10.0, false},
                              {"delta", &p.delta, 0.0, 1.0, true},
                              {"noise", &p.noise, 0.0, 1.0, true},
                              {"worst", &p.worst, 1.0, 1e6, false}};
  parse_modifier_options(whole, modifier, "conservative", keys, "alpha=, delta=, noise=, worst=");
  return p;
}

// `watch` or `watch:full=K,floor=F` (policy/watch_rule.hpp); `watch` alone is kDefaultWatchRule.
WatchRule parse_watch(const std::string& whole, const std::string& modifier) {
  double full = kDefaultWatchRule.full, floor = kDefaultWatchRule.floor;
  const ModifierKey keys[] = {{"full", &full, 1.0, 65535.0, false, true}, {"floor", &floor, 0.0, 1.0, true}};
  parse_modifier_options(whole, modifier, "watch", keys, "full=, floor=");
  return WatchRule{uint32_t(full), floor};
}

}  // namespace

std::vector<PolicySpec> parse_policy_grid(std::string_view spec_text) {
  const std::string whole = trim_blanks(spec_text);
  const std::vector<std::string> parts = split(whole, '@');
  bool slots_only = false;
  std::optional<ConservativeParams> conservative;
  std::optional<WatchRule> watch;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& m = parts[i];
    const std::string name = trim_blanks(std::string_view(m).substr(0, m.find(':')));
    if (m == "slots" && !slots_only) {
      slots_only = true;
    } else if (name == "conservative" && !conservative) {
      conservative = parse_conservative(whole, m);
    } else if (name == "watch" && !watch) {
      watch = parse_watch(whole, m);
    } else {
      throw UsageError(
          "policy spec '" + whole + "': " +
          (name == "slots" || name == "conservative" || name == "watch" ? "'@" + name + "' given twice"
                                                                        : "unknown modifier '@" + m + "'") +
          " (valid: @slots, NCCL's own channels and chunk size only; "
          "@conservative[:alpha=A,delta=D,noise=R,worst=W], never much worse than NCCL's default; "
          "@watch[:full=K,floor=F], watching fewer calls once an arm is known)");
    }
  }
  std::vector<PolicySpec> points = parse_policy_points(parts.front());
  for (PolicySpec& p : points) {
    if (slots_only) {
      p.slots_only = true;
      p.text += "@slots";
    }
    if (conservative) {
      p.conservative = conservative;
      p.text += "@conservative:alpha=" + format_double(conservative->alpha) +
                ",delta=" + format_double(conservative->delta) +
                ",noise=" + format_double(conservative->noise) +
                ",worst=" + format_double(conservative->worst);
    }
    if (watch) {
      p.watch = watch;
      p.text += "@watch:full=" + std::to_string(watch->full) + ",floor=" + format_double(watch->floor);
    }
  }
  return points;
}

std::string replay_only_modifier(const PolicySpec& spec) {
  if (spec.conservative)
    return "policy " + spec.text +
           ": the conservative wrapper runs in the CPU replay engines only (replay, tune, run), not in the "
           "tuner plugin, plugin-check or ope";
  if (spec.watch)
    return "policy " + spec.text +
           ": a watch rule is honoured by the CPU replay engines (replay, tune, run) and the tuner plugin, "
           "not by plugin-check or ope (the plugin applies it one call ahead, to the context it expects "
           "next: docs/plugin.md \"The cost of watching\")";
  return "";
}

PolicySpec parse_policy_spec(std::string_view spec) {
  auto points = parse_policy_grid(spec);
  if (points.size() != 1)
    throw UsageError("policy spec '" + std::string(spec) +
                     "': a single configuration is needed here, not a grid of " +
                     std::to_string(points.size()));
  return points.front();
}

}  // namespace ncclbot
