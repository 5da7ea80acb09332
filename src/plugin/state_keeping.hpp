#pragma once
// NCCLBOT_STATE for a communicator's learner, whatever its arms (docs/plugin.md "State file"): its
// contexts restored at init and saved at finalize, one at a time in the process, with the lines the
// communicator's log says about them.
#include <mutex>
#include <string>

#include "ncclbot/core/knob_spec.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/policy_engine.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

// `knobs`: the lists of a learner over knob arms (N > kNumArms), else null.
template <int N, class Learner>
void restore_learner_state(const CommIdentity& id, const PolicyEngine& engine, const KnobSpec* knobs,
                           const std::string& path, Learner& learner) {
  if (path.empty()) return;
  std::lock_guard<std::mutex> lock(state_file_mutex());
  StateFileT<N> file(engine, knobs);
  std::string warning;
  if (!file.load(path, &warning)) {
    id.log.warn("%s", warning.c_str());
    return;
  }
  const int restored = learner.import_contexts(file);
  // Whether this communicator continues or starts clean (a split or shrunk one is a new shape).
  if (restored > 0)
    id.log.info("commId 0x%llx: restored %d contexts from %s", (unsigned long long)id.comm_id, restored,
                path.c_str());
  else
    id.log.info("commId 0x%llx: %s holds no context of %d ranks on %d nodes: starts clean",
                (unsigned long long)id.comm_id, path.c_str(), id.nranks, id.nnodes);
}

template <int N, class Learner>
void save_learner_state(const CommIdentity& id, const PolicyEngine& engine, const KnobSpec* knobs,
                        const std::string& path, const Learner& learner) {
  if (path.empty()) return;
  std::lock_guard<std::mutex> lock(state_file_mutex());
  StateFileT<N> file(engine, knobs);
  learner.export_contexts(file);
  std::string warning;
  if (!file.save(path, &warning)) id.log.warn("state not saved: %s", warning.c_str());
}

}  // namespace ncclbot::plugin
