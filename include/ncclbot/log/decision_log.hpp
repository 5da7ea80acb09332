#pragma once
// Reading the plugin's decision logs (format: log/decision_log_format.hpp, docs/ope.md) strictly:
// a damaged header, an unknown version, a record whose checksum fails, logs of different versions
// or policies read together are InputErrors naming the file and byte offset. A partial last record
// (a killed job) is dropped and counted, never an error.
#include <map>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log_format.hpp"

namespace ncclbot {

struct DecisionLogFile {
  std::string path;
  std::map<std::string, std::string> header;  // key=value lines
  size_t calls = 0, contexts = 0;
  size_t dropped_tail_bytes = 0;  // a partial last record
};

struct DecisionLogData {
  std::vector<DecisionLogFile> files;
  std::vector<decision_log::CallRecord> calls;        // in file order, then record order
  std::vector<decision_log::ContextRecord> contexts;  // every context record of every file
  std::string policy;                                 // the behaviour policy (every file's header)
  std::string seed;
};

// Reads every file; they must all be version-1 logs of the same policy and seed.
DecisionLogData read_decision_logs(const std::vector<std::string>& paths);

}  // namespace ncclbot
