#pragma once
// `export-table` as a library call (cli/replay_call.hpp has the pattern): a finished study's
// per-context decisions of one policy written as a decision table the tuner plugin reads
// (NCCLBOT_TABLE) or in NCCL's example CSV tuner format; typed options in, what was written out.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "study/decision_export.hpp"

namespace ncclbot::cli {

struct ExportTableCallOptions {
  std::string study_dir;             // the --out folder of a finished `ncclbot run`
  std::string out;                   // the table file to write
  std::string format = "ncclbot";    // or nccl-csv
  study::ExportSelection selection;  // the policy, and optionally scenarios and a fabric
};

struct ExportTableCallResult {
  std::string policy, format, out;
  size_t rows = 0;
};

// InputError on a results.json that is missing, changed since the run or malformed; UsageError on a
// bad format, an unknown policy or an output that would replace a file of the study's folder.
// A warning (command_err()) for a folder that records no checksum.
ExportTableCallResult export_table_call(const ExportTableCallOptions& options);

// The JSON document `export-table --json` prints.
nlohmann::json export_table_document(const ExportTableCallResult& result);

}  // namespace ncclbot::cli
