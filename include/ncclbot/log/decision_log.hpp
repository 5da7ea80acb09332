#pragma once
// Reading the plugin's decision logs (format: log/decision_log_format.hpp, docs/ope.md) whole, for
// logs that fit in memory: every record kept, checked as stream_decision_logs()
// (log/decision_log_stream.hpp) checks it, which also says what is refused. The estimators read
// logs of any size through that stream instead (ope/log_blocks.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ncclbot/log/decision_log_format.hpp"

namespace ncclbot {

struct DecisionLogFile {
  std::string path;
  std::map<std::string, std::string> header;  // key=value lines
  uint32_t version = 0;
  size_t calls = 0, contexts = 0;
  size_t graph_replays = 0;       // of the calls: CUDA-graph replays (version 2), no decisions
  size_t dropped_tail_bytes = 0;  // a partial last record
  // Call records whose latency is no measurement (decision_log::latency_measurable): skipped, not
  // among `calls`; the log's other records are read as they are.
  size_t skipped_latencies = 0;
  // Call records on which NCCL ran another arm than the decided one (docs/ope.md "Calls NCCL ran
  // otherwise"): left out, not among `calls`.
  size_t overridden = 0;
  // Of those, the calls NCCL ran with one of its symmetric kernels (version 5, profiler v7).
  size_t symmetric = 0;
  // Knob call records (version 4, knob mode), whatever became of them.
  size_t knob_calls = 0;
};

struct DecisionLogData {
  std::vector<DecisionLogFile> files;
  std::vector<decision_log::CallRecord> calls;        // in file order, then record order
  std::vector<uint64_t> call_offsets;                 // each call's byte offset in its file
  std::vector<decision_log::ContextRecord> contexts;  // every context record of every file
  std::string policy;                                 // the behaviour policy (every file's header)
  std::string seed;
};

// The calls of `files` skipped for a latency that is no measurement, for the readers' reports.
inline size_t skipped_latencies(const std::vector<DecisionLogFile>& files) {
  size_t n = 0;
  for (const DecisionLogFile& f : files) n += f.skipped_latencies;
  return n;
}

// The calls of `files` on which NCCL ran another arm than the decided one, left out.
inline size_t overridden_calls(const std::vector<DecisionLogFile>& files) {
  size_t n = 0;
  for (const DecisionLogFile& f : files) n += f.overridden;
  return n;
}

// Of those, the calls NCCL ran with one of its symmetric kernels.
inline size_t symmetric_calls(const std::vector<DecisionLogFile>& files) {
  size_t n = 0;
  for (const DecisionLogFile& f : files) n += f.symmetric;
  return n;
}

// "N calls on which NCCL ran another arm than the decided one left out" (", S of them symmetric
// kernels" when S > 0), for the readers' human output.
std::string overridden_calls_text(size_t overridden, size_t symmetric = 0);

// "N calls with a latency outside [0.001, 1e+09] us skipped", for the readers' human output.
std::string skipped_latencies_text(size_t skipped);

// Reads every file in order; they must all be version-1 logs of the same policy and seed.
DecisionLogData read_decision_logs(const std::vector<std::string>& paths);

// The file and byte offset of call i of `data` (for messages).
std::pair<std::string, uint64_t> decision_log_call_place(const DecisionLogData& data, size_t i);

}  // namespace ncclbot
