#pragma once
// Hand-written nccl-tests table lines (after nccl-tests' printf formats, src/util.cu) shared by the
// ingest tests. Every row satisfies algbw = size / time and busbw = algbw * 2(n-1)/n for an
// all_reduce on 8 ranks; the arithmetic is in the comments.
#include <string>

namespace ncclbot::test {

inline const std::string kHeader13 =
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw  "
    " busbw  #wrong\n";
// 1048576 B / 46.52 us = 22.54 GB/s; x 2*7/8 = 39.44 (all_reduce, 8 ranks)
inline const std::string kRow1M =
    "     1048576        262144     float     sum      -1    46.52   22.54   39.44       0    46.44   22.58  "
    " 39.51       0\n";
// 2097152 B / 42.06 us = 49.86 GB/s; x 1.75 = 87.26
inline const std::string kRow2M =
    "     2097152        524288     float     sum      -1    42.06   49.86   87.26       0    42.95   48.82  "
    " 85.44       0\n";

// -I 1 (nccl-tests 2.19+): i_min i_max i_p99 i_cv% after each #wrong.
inline const std::string kHeader21 =
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max "
    "   "
    "i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%\n";
// kRow1M's times with the per-iteration spread: out-of-place 45.10..48.20 us, p99 48.00, cv 1.50%.
inline const std::string kRow1M21 =
    "     1048576        262144     float     sum      -1    46.52   22.54   39.44       0    45.10    48.20 "
    "   "
    "48.00     1.50    46.44   22.58   39.51       0    45.00    47.90    47.80     1.40\n";

// A forced Ring/LL all_reduce on one host of 8 ranks with the -I 1 columns, trailer included
// (average busbw (39.44 + 39.51) / 2 = 39.475).
inline std::string iteration_columns_log() {
  std::string s =
      "export NCCL_ALGO=Ring NCCL_PROTO=LL\n# Collective test starting: all_reduce_perf\n# Using devices\n";
  for (int r = 0; r < 8; ++r)
    s += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on hostA device  0 [0] GPU\n";
  return s + kHeader21 + kRow1M21 + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 39.475\n";
}

}  // namespace ncclbot::test
