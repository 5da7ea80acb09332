#include "plugin/policy_engine.hpp"

#include "ncclbot/replay/policy_spec.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

template <typename T>
uint64_t mix(uint64_t h, const T& v) {
  return fnv1a64(&v, sizeof v, h);
}

}  // namespace

std::shared_ptr<const PolicyEngine> PolicyEngine::create(const std::string& spec, uint64_t seed,
                                                         std::string* error) {
  try {
    // The same parser as `ncclbot replay` (src/replay/policy_spec.cpp), so a spec means the same
    // thing in a study, in plugin-check and in NCCLBOT_POLICY. One configuration only.
    const PolicySpec parsed = parse_policy_spec(spec);
    if (policy_use(parsed.config.kind) != PolicyUse::kLive) {
      *error = "'" + spec + "': " + std::string(policy_name(parsed.config.kind)) +
               " needs a replay's ground truth or a fitted model and cannot run live; export a table instead";
      return nullptr;
    }
    auto engine = std::make_shared<PolicyEngine>();
    engine->config_ = parsed.config;
    engine->spec_ = parsed.text;
    engine->seed_ = seed;
    // The canonical text names every key, so it identifies the configuration; the state layout
    // size guards against a different build.
    uint64_t h = fnv1a64(parsed.text.data(), parsed.text.size());
    h = mix(h, uint64_t(sizeof(PolicyState)));
    engine->fingerprint_ = h;
    return engine;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

}  // namespace ncclbot::plugin
