#pragma once
// nccl-tests logs -> forced-arm sweep. Each usable run gives one sample per (context, arm): its
// rows' times (out-of-place by default). A run is usable only when its arm is known: forced in the
// log itself (JSON env, NCCL's "set by environment" line, a shell/launcher NCCL_ALGO=...) or stated
// in the manifest; an AUTO run is not a measurement of any one arm.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"

namespace ncclbot::nccl_tests {

enum class Placement {
  kOutOfPlace,  // one sample per run: the out-of-place time (default)
  kInPlace,     // one sample per run: the in-place time
  kBoth,        // two samples per run: out-of-place, then in-place
};

// What one sample of the sweep is.
enum class SampleKind {
  kAuto,        // iterations when every run carries them (-I 1 -J), else mean; a mix is an error
  kIterations,  // one sample per timed iteration (-I 1 -J times_us, after -K skipped ones), in order
  kMean,        // one sample per run and size: the averaged time nccl-tests prints
};

struct IngestOptions {
  Placement placement = Placement::kOutOfPlace;
  SampleKind samples = SampleKind::kAuto;
  std::string fabric = "unknown";  // for logs whose manifest entry names none
  bool skip_unforced = false;      // skip runs with no known arm instead of failing
  bool skip_failed = false;        // skip failed runs instead of failing
  // Called for each warning as it arises, so a caller can show them even when ingestion then
  // fails; they are also collected in IngestResult::warnings.
  std::function<void(const Diagnostic&)> on_warning;
};

struct RunReport {
  std::string file;
  long line = 0;
  std::string test;
  bool used = false;
  std::string reason;  // why skipped
  std::string collective, algo, proto, fabric;
  int nodes = 0, gpus_per_node = 0;
  int channels = 0;  // the knob point (0: NCCL's own)
  uint32_t chunk_bytes = 0;
  std::optional<int> nccl_channels;  // the channels NCCL's INIT line says it set up, when logged
  size_t rows = 0;
};

// The per-iteration spread nccl-tests printed (-I 1 text columns) for one averaged sample: what a
// replay can use as call-to-call noise when the logs hold no per-iteration times.
struct NoiseRow {
  Context context;
  Arm arm;
  int sample = 0;  // the sweep sample this run and placement became
  IterationSummary summary;
};

struct IngestResult {
  Sweep sweep;
  SampleKind samples = SampleKind::kMean;  // kIterations or kMean: what the sweep's samples are
  std::vector<RunReport> runs;
  std::vector<Diagnostic> warnings;
  std::vector<NoiseRow> noise;  // mean samples with -I 1 columns only
  size_t csv_rows = 0;          // rows the sweep CSV will have (one per sample)
};

// Reads every log (and the manifest's entries when `logs` is empty). Problems a person must fix
// are InputErrors naming file:line; checks that do not block ingestion become warnings.
IngestResult ingest_logs(const std::vector<std::string>& logs, const Manifest* manifest,
                         const IngestOptions& options);

// The same for logs already parsed (tests, fuzzing).
IngestResult ingest_parsed(const std::vector<ParsedLog>& logs, const Manifest* manifest,
                           const IngestOptions& options);

Placement parse_placement(std::string_view s);     // "out" | "in" | "both"; UsageError otherwise
SampleKind parse_sample_kind(std::string_view s);  // "auto" | "iterations" | "mean"; UsageError otherwise
std::string_view sample_kind_name(SampleKind k);   // "iterations" | "mean" | "auto"

}  // namespace ncclbot::nccl_tests
