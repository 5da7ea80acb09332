#pragma once
// The arms a decision log's calls are counted by (docs/ope.md "Knob logs"), one list for every
// context of the log:
//   a slot log    the kNumArms algorithm x protocol slots, arm index = slot;
//   a knob log    (the plugin in knob mode, NCCLBOT_KNOBS: its header's `knobs` line) every NCCL
//                 algorithm x protocol crossed with those channel and chunk lists, in Arm order
//                 (context_knob_arms over all 21 slots).
// A context's usable arms are those whose slot its cost table leaves: in a knob log exactly the arms
// the plugin decided over in that context (context_knob_arms of its usable slots), in the same
// order, so the logged propensities are over them.
#include <cstddef>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/log/decision_log.hpp"

namespace ncclbot {

// The most arms a knob log's lists may cross into: per logged context the readers keep a list of
// block sums per arm, and an estimate a probability per arm. A stated bound, not a measurement: the
// plugin learns over at most 512 arms of a context, which its lists exceed long before this.
inline constexpr size_t kMaxLoggedArms = 8192;

struct LoggedArms {
  std::vector<Arm> arms;
  std::string knobs;  // the header's `knobs` line; empty: a slot log
  bool knob_log() const { return !knobs.empty(); }
  size_t size() const { return arms.size(); }
  // The index of `a`, -1 when the log's arms do not hold it.
  int index(const Arm& a) const;
};

// A slot log's arms: the kNumArms slots.
LoggedArms slot_logged_arms();

// The arms of the log `file` (its header read): InputError naming the file when its `knobs` line
// does not parse or crosses into more than kMaxLoggedArms arms.
LoggedArms logged_arms(const DecisionLogFile& file);

// `later`'s arms, checked against `first`'s (the first file read): InputError naming `later` when
// the two logs count their calls by different arms (a slot log beside a knob log, or other lists).
void check_same_arms(const LoggedArms& first, const DecisionLogFile& later);

// The arm call `r` ran: its slot and, in a knob call record, its channels and chunk size.
inline Arm call_arm(const decision_log::CallRecord& r) {
  Arm a = Arm::of_slot(r.slot);
  if (r.knobs) {
    a.channels = r.channels;
    a.chunk_bytes = r.chunk_bytes;
  }
  return a;
}

// "Ring/Simple" at NCCL's knobs, "Ring/Simple at 8 channels, chunk 65536 B" otherwise (0: NCCL's).
std::string logged_arm_text(const Arm& a);

}  // namespace ncclbot
