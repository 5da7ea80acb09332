#include "plugin/policy_engine.hpp"

#include <cerrno>
#include <cstdlib>

#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

struct NamedKind {
  const char* name;
  PolicyKind kind;
  const char* keys;  // the keys this policy reads, comma-separated
};

constexpr NamedKind kKinds[] = {
    {"auto", PolicyKind::kAuto, ""},       {"random", PolicyKind::kRandom, ""},
    {"greedy", PolicyKind::kGreedy, "n0"}, {"egreedy", PolicyKind::kEpsGreedy, "eps,decay,n0"},
    {"ucb1", PolicyKind::kUcb1, "c,n0"},   {"thompson", PolicyKind::kThompson, "n0,sigma"},
    {"etc", PolicyKind::kEtc, "m"},        {"swucb", PolicyKind::kSwUcb, "c,window,n0"},
};

bool key_allowed(const char* keys, const std::string& key) {
  std::string list = std::string(",") + keys + ",";
  return list.find("," + key + ",") != std::string::npos;
}

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v == v)) return false;
  *out = v;
  return true;
}

// `name:key=value,...` (DESIGN.md "Contracts"). One configuration only: a `|` grid is an error
// here, since a running job plays one policy. Policies that need a replay's ground truth
// (oracle) or a fitted model (knn, tree) cannot run live.
bool parse_spec(const std::string& spec, PolicyConfig* cfg, std::string* error) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const NamedKind* kind = nullptr;
  for (const NamedKind& k : kKinds)
    if (name == k.name) kind = &k;
  if (kind == nullptr) {
    *error = "'" + spec + "': unknown or not live-capable policy '" + name +
             "' (auto, random, greedy, egreedy, ucb1, thompson, etc, swucb)";
    return false;
  }
  *cfg = PolicyConfig{};
  cfg->kind = kind->kind;
  if (colon == std::string::npos) return true;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    const size_t comma = rest.find(',', pos);
    const std::string item = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? rest.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    double v = 0.0;
    if (eq == std::string::npos || !key_allowed(kind->keys, key)) {
      *error = "'" + spec + "': " + name + " takes " + (kind->keys[0] ? kind->keys : "no keys") + ", not '" +
               item + "'";
      return false;
    }
    if (value.find('|') != std::string::npos || !parse_double(value, &v)) {
      *error = "'" + spec + "': " + key + " must be one number, not '" + value + "'";
      return false;
    }
    if (key == "c")
      cfg->c = v;
    else if (key == "n0")
      cfg->n0 = v;
    else if (key == "eps")
      cfg->eps = v;
    else if (key == "decay")
      cfg->decay = v;
    else if (key == "sigma")
      cfg->sigma = v;
    else if (key == "m")
      cfg->m = int(v);
    else if (key == "window")
      cfg->window = int(v);
  }
  return true;
}

template <typename T>
uint64_t mix(uint64_t h, const T& v) {
  return fnv1a64(&v, sizeof v, h);
}

}  // namespace

std::shared_ptr<const PolicyEngine> PolicyEngine::create(const std::string& spec, uint64_t seed,
                                                         std::string* error) {
  try {
    auto engine = std::make_shared<PolicyEngine>();
    if (!parse_spec(spec, &engine->config_, error)) return nullptr;
    engine->spec_ = spec;
    engine->seed_ = seed;
    const PolicyConfig& c = engine->config_;
    uint64_t h = fnv1a64("ncclbot-policy-state", 20);
    h = mix(h, int(c.kind));
    h = mix(h, c.c);
    h = mix(h, c.n0);
    h = mix(h, c.eps);
    h = mix(h, c.decay);
    h = mix(h, c.sigma);
    h = mix(h, c.m);
    h = mix(h, c.window);
    h = mix(h, uint64_t(sizeof(PolicyState)));
    engine->fingerprint_ = h;
    return engine;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

}  // namespace ncclbot::plugin
