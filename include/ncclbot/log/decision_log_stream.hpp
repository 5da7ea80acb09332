#pragma once
// Reading decision logs in one sequential pass (format: log/decision_log_format.hpp, docs/ope.md),
// handing each record to a sink as it is read and checked, so memory does not grow with the calls:
// the files are read in the order given (a log's rotated siblings PATH, PATH.1, ... in the order the
// plugin wrote them), each through a fixed buffer. Everything read_decision_logs() refuses is refused
// here, at the record, naming the file and byte offset: a damaged header, an unknown version, a
// record whose checksum fails or whose fields no plugin writes, logs of different policies or seeds,
// one file given twice, a header policy that is no spec or whose probabilities the records do not
// have, and a call logged twice. The last is checked in bounded memory: the plugin writes each
// context's calls of a communicator in call order, so within a file their indices must rise (an
// index that does not is logged twice, or the file is spliced), and across files the ranges of
// indices of one context must not overlap. A context described a second time with another cost
// table or NCCL pick is refused too. A partial last record (a killed job) is dropped and counted,
// never an error; so is a call whose latency is no measurement (decision_log::latency_measurable),
// skipped and counted in DecisionLogFile::skipped_latencies while the other calls are read.
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log.hpp"

namespace ncclbot {

// What a pass hands out; `offset` is the record's byte in `path`.
class DecisionLogSink {
 public:
  virtual ~DecisionLogSink() = default;
  // Each file's header, read and checked, before its records; `policy` is the behaviour policy.
  virtual void file(const DecisionLogFile&, const std::string& /*policy*/) {}
  virtual void context(const decision_log::ContextRecord& r, const std::string& path, uint64_t offset) = 0;
  virtual void call(const decision_log::CallRecord& r, const std::string& path, uint64_t offset) = 0;
};

struct DecisionLogSummary {
  std::vector<DecisionLogFile> files;
  std::string policy, seed;  // the behaviour policy and its seed (every file's header)
};

// Reads every file, in order, into `sink`; they must all be version-1 logs of the same policy and seed.
DecisionLogSummary stream_decision_logs(const std::vector<std::string>& paths, DecisionLogSink& sink);

}  // namespace ncclbot
