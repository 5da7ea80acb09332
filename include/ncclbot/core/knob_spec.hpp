#pragma once
// The channel and chunk values a knob sweep crosses with every algorithm and protocol: the text
// `channels=0,2,4,8;chunk=0,64K,256K` (K = KiB, M = MiB), with `chunk.LL=`, `chunk.LL128=`,
// `chunk.Simple=` for one protocol's own list. A value in `chunk` that is no multiple of a protocol's
// grain is skipped for that protocol; one that fits no protocol's grain is an error.
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"

namespace ncclbot {

struct KnobSpec {
  std::vector<int> channels;                 // 0..64, 0 = NCCL's own
  std::vector<uint32_t> chunks[kNumProtos];  // per protocol, 0 = NCCL's own
};

// UsageError (one line, exit 2, starting with `source`: the flag or setting that gave the text) on
// an unknown key, an empty list, channels outside [0, 64], a chunk off its protocol's grain or above
// 2^30, or a malformed number.
KnobSpec parse_knob_spec(const std::string& text, const std::string& source = "--knobs");

// The arms of one algorithm x protocol slot: every channel value crossed with its protocol's chunks.
std::vector<Arm> knob_arms(const KnobSpec& spec, int slot);

}  // namespace ncclbot
