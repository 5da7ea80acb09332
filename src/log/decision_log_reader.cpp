#include "ncclbot/log/decision_log.hpp"

#include <fmt/format.h>

#include <new>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log_stream.hpp"

namespace ncclbot {
namespace {

// Keeps every record a pass hands out.
class KeepAll final : public DecisionLogSink {
 public:
  explicit KeepAll(DecisionLogData& data) : data_(data) {}
  void context(const decision_log::ContextRecord& r, const std::string& path, uint64_t offset) override {
    keep([&] { data_.contexts.push_back(r); }, path, offset);
  }
  void call(const decision_log::CallRecord& r, const std::string& path, uint64_t offset) override {
    keep(
        [&] {
          data_.calls.push_back(r);
          data_.call_offsets.push_back(offset);
        },
        path, offset);
  }

 private:
  template <typename F>
  static void keep(F&& push, const std::string& path, uint64_t offset) {
    try {
      push();
    } catch (const std::bad_alloc&) {
      throw InputError(path, 0,
                       "byte " + std::to_string(offset) +
                           ": more records than this machine's memory holds; read fewer logs at once");
    }
  }
  DecisionLogData& data_;
};

}  // namespace

std::pair<std::string, uint64_t> decision_log_call_place(const DecisionLogData& data, size_t i) {
  size_t first = 0;
  for (const DecisionLogFile& f : data.files) {
    if (i < first + f.calls) return {f.path, data.call_offsets[i]};
    first += f.calls;
  }
  throw std::out_of_range("decision_log_call_place: no call " + std::to_string(i));
}

std::string skipped_latencies_text(size_t skipped) {
  return fmt::format("{} call{} with a latency outside [{:g}, {:g}] us skipped", skipped,
                     skipped == 1 ? "" : "s", decision_log::kMinLatencyUs, decision_log::kMaxLatencyUs);
}

std::string overridden_calls_text(size_t overridden, size_t symmetric) {
  std::string text = fmt::format("{} call{} on which NCCL ran another arm than the decided one left out",
                                 overridden, overridden == 1 ? "" : "s");
  if (symmetric > 0) text += fmt::format(" ({} of them one of NCCL's symmetric kernels)", symmetric);
  return text;
}

DecisionLogData read_decision_logs(const std::vector<std::string>& paths) {
  DecisionLogData data;
  KeepAll keep(data);
  DecisionLogSummary summary = stream_decision_logs(paths, keep);
  data.files = std::move(summary.files);
  data.policy = std::move(summary.policy);
  data.seed = std::move(summary.seed);
  return data;
}

}  // namespace ncclbot
