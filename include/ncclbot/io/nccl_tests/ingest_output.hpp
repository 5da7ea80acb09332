#pragma once
// What `ingest` writes: the sweep CSV (the columns of docs/architecture.md "Data model", unchanged)
// opened by one comment line that says what its samples are, which every sweep reader skips:
//   # samples: iterations (nccl-tests -I 1 -J times_us: one sample per timed iteration, in order)
//   # samples: mean (one averaged time per run and size)
// and, for averaged samples whose logs printed `-I 1` columns, the sidecar SWEEP.noise.csv:
//   fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,i_min_us,i_max_us,i_p99_us,i_cv_pct
// one row per sweep sample (the same key columns), so a replay can use the call-to-call spread
// nccl-tests measured. Both files are written to a temporary name and renamed.
#include <string>
#include <vector>

#include "ncclbot/io/nccl_tests/ingest.hpp"

namespace ncclbot::nccl_tests {

// What one sample is, as the sweep's side file says it (io/sweep_side_data.hpp): "iterations" or "mean".
std::string sample_kind_word(SampleKind k);
std::string noise_sidecar_path(const std::string& sweep_path);  // a.csv -> a.noise.csv

// The sidecar's text (header and rows in sweep order).
std::string noise_csv(const std::vector<NoiseRow>& rows);

// UsageError when `out` is one of `inputs` (or the same file through another name).
void check_output_is_not_input(const std::string& out, const std::vector<std::string>& inputs);

// Writes the sweep (and the sidecar when there are noise rows). Returns the sidecar path written,
// or "" when none.
std::string write_ingest_output(const IngestResult& result, const std::string& out);

}  // namespace ncclbot::nccl_tests
