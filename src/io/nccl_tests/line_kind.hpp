#pragma once
// What one (prefix-stripped) log line is, apart from column headers and data rows.
#include <optional>
#include <string>
#include <string_view>

namespace ncclbot::nccl_tests {

enum class LineKind {
  kOther,          // noise: shell traces, markdown, NCCL INFO, launcher chatter
  kVersion,        // "# nccl-tests version 2.17.9 ..."
  kTestStarting,   // "# Collective test starting: all_reduce_perf"
  kTestConcluded,  // "# Collective test concluded: all_reduce_perf"
  kParams,         // "# nThread 1 nGpus 8 minBytes 8 maxBytes ..."
  kDevice,         // "#  Rank  0 Group  0 Pid 1583223 on host device  0 [...] NAME"
  kOutOfBounds,    // "# Out of bounds values : 0 OK"
  kAvgBusBw,       // "# Avg bus bandwidth    : 122.955"
  kFailure,        // "host: Test NCCL failure common.cu:401 '...'"
  kFailureDetail,  // " .. host pid 441581: Test failure common.cu:519"
  kNcclWarn,       // "... NCCL WARN ..."
};

struct LineInfo {
  LineKind kind = LineKind::kOther;
  std::string text;  // test name, failure message or warning text
  int rank = 0;      // kDevice
  std::string host;  // kDevice
  double value = 0;  // kAvgBusBw: the bandwidth; kOutOfBounds: the count
};

LineInfo classify_line(std::string_view line);

// The value of a forced NCCL variable (var = "NCCL_ALGO" / "NCCL_PROTO") if the line sets it:
// NCCL's "NCCL_ALGO set by environment to Ring" or a shell/launcher "NCCL_ALGO=Ring"
// (export, env, mpirun -x). `from_nccl` tells which of the two it was.
std::optional<std::string> forced_env_value(std::string_view line, std::string_view var, bool& from_nccl);

// N of NCCL's INIT line "... NCCL INFO N coll channels, ..." (NCCL src/init.cc, 2.19 to 2.32): the
// channels the communicator set up.
std::optional<int> coll_channels_in(std::string_view line);

// "all_reduce_perf" when a command line in the log runs an nccl-tests binary.
std::optional<std::string> test_name_in_command(std::string_view line);

}  // namespace ncclbot::nccl_tests
