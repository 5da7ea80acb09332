// libFuzzer target: the decision-log reader (`ope` and `telemetry`'s input) and the join of its
// calls to their cost tables (ope_data). Before reading, every record whose kind and size are the
// format's gets its checksum resealed, so mutations reach the field, header-policy and duplicate
// checks instead of dying on the checksum. Only an InputError may come out, and an accepted log's
// calls carry what the estimators need: a weight 1/p of at most 10^6 and a latency in bounds.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/off_policy.hpp"

using namespace ncclbot;

namespace {

void reseal(std::string& bytes) {
  using namespace decision_log;
  auto* p = reinterpret_cast<unsigned char*>(bytes.data());
  if (bytes.size() < 16) return;
  const uint32_t version = detail::get<uint32_t>(p, 8);
  size_t at = detail::get<uint32_t>(p, 12);
  while (at >= 16 && at + 8 <= bytes.size()) {
    const uint32_t kind = detail::get<uint32_t>(p + at, 0), size = detail::get<uint32_t>(p + at, 4);
    const uint32_t want = kind == kKindCall       ? call_record_bytes(version, false)
                          : kind == kKindKnobCall ? call_record_bytes(version, true)
                          : kind == kKindContext  ? kContextRecordBytes
                                                  : 0;
    if (want == 0 || size != want || at + size > bytes.size()) return;
    detail::seal(p + at, kind, size);
    at += size;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char name[] = "/tmp/ncclbot-fuzz-decision-log-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::close(fd);
    return std::string(name);
  }();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  reseal(bytes);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0)
    std::abort();
  size_t whole = 0, streamed = 0;
  try {
    const DecisionLogData log = read_decision_logs({path});
    if (log.calls.size() != log.call_offsets.size()) std::abort();
    const OpeData d = ope_data(log);
    for (const OpeCall& c : d.calls)
      if (!(c.propensity >= kMinPropensity && c.propensity <= 1.0) ||
          !(c.latency_us >= kMinLatencyUs && c.latency_us <= kMaxLatencyUs) || c.context < 0 ||
          size_t(c.context) >= d.contexts.size() || c.arm < 0 || size_t(c.arm) >= d.arms.size() ||
          !arm_usable(d.contexts[size_t(c.context)], d.arms.arms[size_t(c.arm)]))
        std::abort();
    whole = d.calls.size();
  } catch (const InputError&) {
  }
  // The blocks read as a stream take exactly the logs the whole reader and ope_data take.
  try {
    const LogBlocks b = read_log_blocks({path}, BlockRule{});
    streamed = size_t(b.calls);
    for (const ContextBlocks& c : b.blocks)
      if (c.blocks() > 2048 || !(c.p_min >= kMinPropensity)) std::abort();
  } catch (const InputError&) {
  }
  if (whole != streamed) std::abort();
  return 0;
}
