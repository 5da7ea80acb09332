#pragma once
// A knob sweep's context as plugin-check hands it to the plugin (docs/plugin.md "Knob mode"): NCCL's
// cost table (each algorithm x protocol's entry is the prior its arms share: NCCL's model does not
// see knobs) and the NCCLBOT_KNOBS text whose crossing the plugin builds is exactly the context's
// arms.
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "plugin_check/context_check.hpp"

namespace ncclbot::plugin_check {

// Context c of the knob sweep `v` (its arm view): the cost table and the knob lists. false, with the
// reason in `skipped`, when the plugin cannot hold the context's arms call for call: a simulated
// arm, an algorithm x protocol whose arms carry different priors or none, or arms that are not the
// crossing of the context's own channel and chunk values (the plugin builds crossings) with every
// arm measured.
bool knob_context(const SweepView& v, int c, CostTable7x3* table, std::string* knobs, std::string* skipped);

}  // namespace ncclbot::plugin_check
