#include "ncclbot/ope/logged_arms.hpp"

#include <algorithm>

#include "ncclbot/core/context_knob_arms.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot {

int LoggedArms::index(const Arm& a) const {
  if (!knob_log()) return a.default_knobs() && a.slot() >= 0 && a.slot() < kNumArms ? a.slot() : -1;
  return knob_arm_index(arms, a);
}

LoggedArms slot_logged_arms() {
  LoggedArms out;
  for (int s = 0; s < kNumArms; ++s) out.arms.push_back(Arm::of_slot(s));
  return out;
}

LoggedArms logged_arms(const DecisionLogFile& file) {
  const auto it = file.header.find("knobs");
  if (it == file.header.end()) return slot_logged_arms();
  LoggedArms out;
  out.knobs = it->second;
  KnobSpec spec;
  try {
    spec = parse_knob_spec(out.knobs, "the header's knobs line");
  } catch (const UsageError& e) {
    throw InputError(file.path, 0, e.what());
  }
  ArmMask every;
  for (int s = 0; s < kNumNcclArms; ++s) every.set(s);
  out.arms = context_knob_arms(every, spec);
  if (out.arms.size() > kMaxLoggedArms)
    throw InputError(file.path, 0,
                     "the header's knobs line (" + out.knobs + ") crosses NCCL's " +
                         std::to_string(kNumNcclArms) + " algorithm x protocol pairs into " +
                         std::to_string(out.arms.size()) + " arms, more than ope and telemetry read (" +
                         std::to_string(kMaxLoggedArms) + ")");
  return out;
}

void check_same_arms(const LoggedArms& first, const DecisionLogFile& later) {
  const auto it = later.header.find("knobs");
  const std::string knobs = it == later.header.end() ? std::string() : it->second;
  if (knobs == first.knobs) return;
  const auto said = [](const std::string& k) {
    return k.empty() ? std::string("no knobs line (a slot log)") : "knobs line '" + k + "'";
  };
  throw InputError(later.path, 0,
                   "has " + said(knobs) + " where the first log has " + said(first.knobs) +
                       ": the logs of one reading must count their calls by the same arms");
}

std::string logged_arm_text(const Arm& a) {
  std::string s = std::string(algo_name(a.algo)) + "/" + std::string(proto_name(a.proto));
  if (a.default_knobs()) return s;
  s += " at ";
  s += a.channels ? std::to_string(a.channels) + " channels" : std::string("NCCL's channels");
  s += a.chunk_bytes ? ", chunk " + std::to_string(a.chunk_bytes) + " B" : std::string(", NCCL's chunk");
  return s;
}

}  // namespace ncclbot
