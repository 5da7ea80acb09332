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
    // A watch rule is the plugin's too (it switches the profiler's kernel events); the conservative
    // wrapper is not.
    if (parsed.conservative) {
      *error = replay_only_modifier(parsed);
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
    if (parsed.watch) engine->watch_ = *parsed.watch;
    // The canonical text names every key, so it identifies the configuration. The state file
    // stores fields one by one and checks their number, so no layout size enters here. A watch rule
    // (last in the text) changes which latencies come, not what the policy state means: a state
    // saved with one restores without it and the other way round.
    const std::string state_text = parsed.text.substr(0, parsed.text.find("@watch"));
    engine->fingerprint_ = fnv1a64(state_text.data(), state_text.size());
    return engine;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

}  // namespace ncclbot::plugin
