#pragma once
// Hand-written nccl-tests table lines (after the printf formats of nccl-tests src/util.cu) shared by
// the ingest tests. Every row satisfies algbw = size / time and busbw = algbw * 2(n-1)/n for an
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

// -I 1 -J output in the key order of nccl-tests' writer (nccl-tests src/util.cu: writeBenchmarkLinePreamble,
// writeBenchmarkLineBody, writePerIterReport, "%lf"): a forced Ring/LL all_reduce on 2 hosts x 1 rank: bus
// factor 2(2-1)/2 = 1.
//   1024 B: out-of-place times 10.5 9.75 10.25 11.5 (mean 10.5 -> algbw 1024/10.5e3 = 0.097524)
//           in-place 10 10 12 10 (mean 10.5)
//   4096 B: out-of-place 20 21 19 20 (mean 20 -> 0.2048), in-place 20.5 20.5 19.5 19.5 (mean 20)
//   average busbw (0.097524 * 2 + 0.2048 * 2) / 4 = 0.151162
inline std::string per_iteration_json(int skipped = 0, const std::string& process1_first = "10.000000") {
  const std::string k = std::to_string(skipped);
  return R"({"version":3,"start_time":"2026-03-01 10:00:00","args":["./build/all_reduce_perf","-b","1K","-e","4K","-f","4","-g","1","-n","4","-I","1","-J","r.json"],"env":["NCCL_ALGO=Ring","NCCL_PROTO=LL"],"nccl_version":22807,"config":{"nthreads":1,"ngpus":1,"minimum_bytes":1024,"maximum_bytes":4096,"step_factor":4,"warmup_iters":1,"iterations":4,"aggregated_iterations":1,"validation":1,"graph":0,"blocking_collectives":false,"per_iter_timing":true,"per_iter_skip":)" +
         k +
         R"(,"parallel_init":false,"devices":[{"rank":0,"group":0,"pid":11,"hostname":"a","device":0,"device_hex":"0000:18:00","device_info":"GPU"},{"rank":1,"group":0,"pid":12,"hostname":"b","device":0,"device_hex":"0000:18:00","device_info":"GPU"}]},"results":[
{"size":1024,"count":256,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":10.500000,"alg_bw":0.097524,"bus_bw":0.097524,"nwrong":0.000000},"out_of_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":9.750000,"max_us":11.500000,"avg_us":10.500000,"p50_us":10.500000,"p95_us":11.500000,"p99_us":11.500000,"stdev_us":0.637377,"cv_pct":6.070259,"times_us":[10.500000,9.750000,10.250000,11.500000],"per_process_max_times_us":[[10.500000,9.750000,10.250000,11.500000],[)" +
         process1_first +
         R"(,9.500000,10.250000,11.000000]]},"in_place":{"time":10.500000,"alg_bw":0.097524,"bus_bw":0.097524,"nwrong":0.000000},"in_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":10.000000,"max_us":12.000000,"avg_us":10.500000,"p50_us":10.000000,"p95_us":12.000000,"p99_us":12.000000,"stdev_us":0.866025,"cv_pct":8.247861,"times_us":[10.000000,10.000000,12.000000,10.000000],"per_process_max_times_us":[[10.000000,10.000000,12.000000,10.000000],[9.000000,9.000000,9.000000,9.000000]]},"actual_iterations":4,"experiment_name":""},
{"size":4096,"count":1024,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":20.000000,"alg_bw":0.204800,"bus_bw":0.204800,"nwrong":0.000000},"out_of_place_per_iter":{"skipped_iterations":)" +
         k +
         R"(,"min_us":19.000000,"max_us":21.000000,"avg_us":20.000000,"p50_us":20.000000,"p95_us":21.000000,"p99_us":21.000000,"stdev_us":0.707107,"cv_pct":3.535534,"times_us":[20.000000,21.000000,19.000000,20.000000],"per_process_max_times_us":[[20.000000,21.000000,19.000000,20.000000],[19.000000,19.000000,19.000000,19.000000]]},"in_place":{"time":20.000000,"alg_bw":0.204800,"bus_bw":0.204800,"nwrong":0.000000},"in_place_per_iter":{"skipped_iterations":)" + k + R"(,"min_us":19.500000,"max_us":20.500000,"avg_us":20.000000,"p50_us":20.500000,"p95_us":20.500000,"p99_us":20.500000,"stdev_us":0.500000,"cv_pct":2.500000,"times_us":[20.500000,20.500000,19.500000,19.500000],"per_process_max_times_us":[[20.500000,20.500000,19.500000,19.500000],[19.000000,19.000000,19.000000,19.000000]]},"actual_iterations":4,"experiment_name":""}],"out_of_bounds":{"count":0,"okay":true},"average_bus_bandwidth":{"bandwidth":0.151162,"okay":"unchecked"},"errors":[],"end_time":"2026-03-01 10:00:02"})";
}

}  // namespace ncclbot::test
