#include "plugin/policy_engine.hpp"

#include "ncclbot/replay/policy_spec.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

std::shared_ptr<const PolicyEngine> PolicyEngine::create(const std::string& spec, uint64_t seed,
                                                         std::string* error) {
  try {
    // The same parser as `ncclbot replay` (src/replay/policy_spec.cpp), so a spec means the same
    // thing in a study, in plugin-check and in NCCLBOT_POLICY. One configuration only.
    const PolicySpec parsed = parse_policy_spec(spec);
    if (const std::string why = replay_only_modifier(parsed); !why.empty()) {
      *error = why;
      return nullptr;
    }
    if (policy_use(parsed.config.kind) != PolicyUse::kLive) {
      *error = "'" + spec + "': " + std::string(policy_name(parsed.config.kind)) +
               " needs a replay's ground truth or a fitted model and cannot run live; export a table instead";
      return nullptr;
    }
    auto engine = std::make_shared<PolicyEngine>();
    engine->config_ = parsed.config;
    engine->spec_ = parsed.text;
    engine->seed_ = seed;
    engine->slots_only_ = parsed.slots_only;
    // The canonical text names every key, so it identifies the configuration. The state file
    // stores fields one by one and checks their number, so no layout size enters here.
    engine->fingerprint_ = fnv1a64(parsed.text.data(), parsed.text.size());
    return engine;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

}  // namespace ncclbot::plugin
