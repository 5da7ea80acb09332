#pragma once
// What an nccl-tests log says, before any decision about sweeps: the runs it holds, each with its
// rows, device list, forced NCCL_ALGO/NCCL_PROTO (if the log records them), trailer and failure.
// Parsing is structural only; whether a run may become forced-arm data is decided by ingest.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/collective.hpp"

namespace ncclbot::nccl_tests {

// A number as nccl-tests printed it, with half the step of its last printed digit, so checks can
// tell a real mismatch from rounding ("0.00" may be anything below 0.005).
struct PrintedNumber {
  double value = 0.0;
  double half_step = 0.0;
};

// `-I 1` (nccl-tests 2.19+): the per-iteration summary of one placement, i.e. the text columns
// `i_min i_max i_p99 i_cv%` or the JSON `*_per_iter` fields min_us, max_us, p99_us, cv_pct. Each
// iteration's time is the slowest GPU's CUDA-event time; the summary leaves out `-K` skipped ones.
struct IterationSummary {
  PrintedNumber min_us, max_us, p99_us, cv_pct;
};

// `-I 1 -J FILE`: every timed iteration of one placement, in the order they ran (the JSON
// `times_us` list, which includes the `skipped_iterations` leading ones that `-K` excludes).
struct IterationTimes {
  std::vector<double> times_us;
  int skipped = 0;
};

// One placement (out-of-place or in-place) of one row.
struct Measurement {
  PrintedNumber time_us;  // the average over the timed iterations
  PrintedNumber algbw;    // GB/s, GB = 1e9 B
  PrintedNumber busbw;
  std::optional<double> wrong;                        // #wrong count or old-format max error; nullopt for N/A
  std::optional<IterationSummary> iteration_summary;  // -I 1
  std::optional<IterationTimes> iterations;           // -I 1 -J
};

struct Row {
  long line = 0;
  uint64_t bytes = 0;  // the `size` column
  uint64_t count = 0;
  std::string type, redop;  // redop empty when the layout has no redop column
  std::optional<int64_t> root;
  Measurement out_of_place;
  std::optional<Measurement> in_place;
};

// "#  Rank  3 Group  0 Pid 1583223 on host device  3 [0000:3b:00] NVIDIA H100 80GB HBM3"
struct DeviceEntry {
  long line = 0;
  int rank = 0;
  std::string host;
};

// A forced setting the log records, e.g. NCCL_ALGO=Ring, and where it was seen.
struct ForcedSetting {
  std::string value;
  long line = 0;
  std::string how;  // "JSON env", "NCCL_ALGO set by environment", "shell/launcher line"
};

struct RunFailure {
  long line = 0;
  std::string message;
};

struct Run {
  long first_line = 0;
  std::string test_name;  // e.g. "all_reduce_perf"; empty when the log never names it
  long test_name_line = 0;
  std::vector<DeviceEntry> devices;
  std::optional<ForcedSetting> algo, proto;
  // The knob variables the JSON env recorded: the channel limits (NCCL_MIN_CTAS, NCCL_MAX_CTAS),
  // ncclbot's decision table (NCCLBOT_TABLE) and NCCL_CHUNK_SIZE, which ncclbot refuses (#2408).
  std::optional<ForcedSetting> min_ctas, max_ctas, tuner_table, chunk_size_env;
  // The channels NCCL set up, from its INIT line "N coll channels, ..." (NCCL src/init.cc; printed
  // with NCCL_DEBUG=INFO): the first such line of the run, and whether another line disagreed.
  std::optional<ForcedSetting> coll_channels;
  std::optional<int> nccl_version;  // the library's NCCL_VERSION_CODE (JSON nccl_version; 2.30.3 = 23003)
  bool coll_channels_disagree = false;
  long header_line = 0;             // the column header the rows were read with
  bool time_is_cpu = false;         // `-C 1`: the time column is CPU time ("cputime")
  bool wrong_is_deviation = false;  // pre-2022 `error` column: max deviation (float), not a count
  std::vector<Row> rows;
  long trailer_line = 0;  // "Avg bus bandwidth" line; 0 when the trailer is missing
  std::optional<double> avg_busbw;
  std::optional<RunFailure> failure;
};

struct Diagnostic {
  std::string file;
  long line = 0;
  std::string message;
  std::string text() const;  // "file:line: message"
};

struct ParsedLog {
  std::string file;
  std::vector<Run> runs;
  std::vector<Diagnostic> warnings;
};

// Text or `-J` JSON (detected by the first non-blank character). Structural problems (two runs
// interleaved, wrong column counts, bad numbers, broken JSON) are InputErrors naming file:line.
ParsedLog parse_log(std::string_view text, const std::string& file);
ParsedLog read_log(const std::string& path);

// The bytes of one log, at most kMaxLogBytes (an InputError beyond, or on NUL bytes): a device
// such as /dev/zero or a runaway file fails fast instead of filling memory.
inline constexpr size_t kMaxLogBytes = size_t(256) << 20;
std::string read_log_bytes(const std::string& path);

// "all_reduce_perf" -> AllReduce; nullopt for tests that are not one NCCL collective.
std::optional<Collective> collective_of_test(std::string_view test_name);

}  // namespace ncclbot::nccl_tests
