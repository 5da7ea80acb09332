#pragma once
// Decision logs written byte for byte with the format's own encoder (log/decision_log_format.hpp),
// for the tests that read or attack them: one context, all-reduce of 4096 B on 2 nodes x 16 ranks
// (communicator 0xabc), arms 0..5 usable at 10..15 us, NCCL's pick slot 4, and its calls.
#include <cstdint>
#include <string>

#include "ncclbot/log/decision_log_format.hpp"

namespace ncclbot::test {

// The file header for "key=value\n" lines.
inline std::string decision_log_header(const std::string& text) {
  unsigned char header[decision_log::kMaxHeaderBytes];
  const uint32_t n = decision_log::encode_header(text.data(), text.size(), header);
  return std::string(reinterpret_cast<char*>(header), n);
}

// The context's record: NCCL's cost table on its first call.
inline std::string decision_log_context() {
  decision_log::ContextRecord c;
  c.comm_hash = 0xabc;
  c.bytes = 4096;
  c.nodes = 2;
  c.ranks = 16;
  c.collective = 4;
  c.nccl_slot = 4;
  for (int s = 0; s < kNumNcclArms; ++s) c.cost_us[s] = s < 6 ? 10.0f + float(s) : -1.0f;
  unsigned char out[decision_log::kContextRecordBytes];
  decision_log::encode(c, out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

// A call record of that context (or, with `bytes`, of another size on the same communicator):
// call `index`, `slot` played with `propensity`, measured `latency_us`.
inline decision_log::CallRecord decision_log_call_record(uint64_t index, int slot, double propensity,
                                                         double latency_us, uint64_t bytes = 4096) {
  decision_log::CallRecord r;
  r.comm_hash = 0xabc;
  r.call_index = index;
  r.bytes = bytes;
  r.latency_us = latency_us;
  r.propensity = propensity;
  r.nodes = 2;
  r.ranks = 16;
  r.collective = 4;
  r.slot = slot;
  r.nccl_slot = 4;
  return r;
}

// A call record's bytes as a log of `version` (4 or later) holds it, sealed: a knob call (kind 3)
// when r.knobs.
inline std::string encoded(const decision_log::CallRecord& r,
                           uint32_t version = decision_log::kDecisionLogVersion) {
  unsigned char out[decision_log::kKnobCallRecordBytes];
  const uint32_t n = decision_log::encode_call(r, out, version);
  return std::string(reinterpret_cast<char*>(out), n);
}

// The bytes of decision_log_call_record().
inline std::string decision_log_call(uint64_t index, int slot, double propensity, double latency_us,
                                     uint64_t bytes = 4096) {
  return encoded(decision_log_call_record(index, slot, propensity, latency_us, bytes));
}

}  // namespace ncclbot::test
