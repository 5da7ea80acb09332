// The layouts and noise of nccl-tests output that the shared logs do not contain, written here
// by hand after nccl-tests' printf formats (nccl-tests src/util.cu, common.cu). Every row below satisfies
// algbw = size / time and busbw = algbw * 2(n-1)/n; the arithmetic is in the comments.
#include <gtest/gtest.h>

#include "io/nccl_tests/column_layout.hpp"
#include "io/nccl_tests/line_prefix.hpp"
#include "io/nccl_tests/printed_number.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "support/ingest_checks.hpp"
#include "support/nccl_tests_rows.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;
using namespace ncclbot::test;

namespace {

std::string devices_1x8() {
  std::string s = "# Using devices\n";
  for (int r = 0; r < 8; ++r)
    s += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on hostA device  " + std::to_string(r) +
         " [0000:29:00] GPU\n";
  return s;
}

std::string run_text(const std::string& extra_before_rows = "") {
  return "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8 minBytes 1048576 maxBytes "
         "2097152\n" +
         devices_1x8() + extra_before_rows + kHeader13 + kRow1M + kRow2M +
         "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 62.9125\n";  // (39.44+39.51+87.26+85.44)/4
}

IngestResult ingest_text(const std::string& text, const std::string& manifest_toml = "",
                         IngestOptions o = {}) {
  std::vector<ParsedLog> logs = {parse_log(text, "log.txt")};
  if (manifest_toml.empty()) return ingest_parsed(logs, nullptr, o);
  const Manifest m = parse_manifest(manifest_toml, "runs.toml");
  return ingest_parsed(logs, &m, o);
}

}  // namespace

TEST(IngestFormats, LauncherPrefixes) {
  EXPECT_EQ(strip_launcher_prefix("0: # nThread 1"), "# nThread 1");
  EXPECT_EQ(strip_launcher_prefix("12:            8     2  float"), "           8     2  float");
  EXPECT_EQ(strip_launcher_prefix("Thu Jul 18 15:41:05 2024<stdout>:#  size"), "#  size");
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:     8   2 float\r"), "     8   2 float");
  EXPECT_EQ(strip_launcher_prefix("     8     2  float"), "     8     2  float");  // a data row stays
  EXPECT_EQ(strip_launcher_prefix("10:30 meeting"), "10:30 meeting");              // no space after ':'
}

TEST(IngestFormats, ByteOrderMarkAndCrLf) {
  std::string text = "\xEF\xBB\xBF" + run_text();
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2))
    text.insert(at, "\r");
  const ParsedLog log = parse_log(text, "w.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].test_name, "all_reduce_perf");  // line 1, behind the BOM
  EXPECT_EQ(log.runs[0].rows.size(), 2u);
  EXPECT_EQ(log.runs[0].devices.size(), 8u);
  EXPECT_DOUBLE_EQ(*log.runs[0].avg_busbw, 62.9125);
}

TEST(IngestFormats, PrintedNumberResolution) {
  EXPECT_DOUBLE_EQ(parse_printed_number("34.98")->half_step, 0.005);
  EXPECT_DOUBLE_EQ(parse_printed_number("10329.0")->half_step, 0.05);
  EXPECT_DOUBLE_EQ(parse_printed_number("47535")->half_step, 0.5);
  EXPECT_DOUBLE_EQ(parse_printed_number("1.6e+07")->value, 1.6e7);
  EXPECT_DOUBLE_EQ(parse_printed_number("1.6e+07")->half_step, 5e5);  // last digit is 1e6
  EXPECT_DOUBLE_EQ(parse_printed_number("2e-07")->half_step, 5e-8);
  EXPECT_FALSE(parse_printed_number("nan"));
  EXPECT_FALSE(parse_printed_number("inf"));
  EXPECT_FALSE(parse_printed_number("-1"));
  EXPECT_FALSE(parse_printed_number("0x10"));
  EXPECT_FALSE(parse_printed_number("1e999"));
  EXPECT_FALSE(parse_printed_number(""));
}

TEST(IngestFormats, ColumnHeaders) {
  const auto modern = parse_column_header(kHeader13);
  ASSERT_TRUE(modern.layout);
  EXPECT_EQ(modern.layout->columns, 13);
  EXPECT_EQ(modern.layout->root, 4);
  EXPECT_EQ(modern.layout->in_place.time, 9);
  // pre-2022 broadcast: root but no redop; all_gather: neither.
  const auto bcast =
      parse_column_header("#  size count type root time algbw busbw error time algbw busbw error");
  ASSERT_TRUE(bcast.layout);
  EXPECT_EQ(bcast.layout->redop, -1);
  EXPECT_EQ(bcast.layout->root, 3);
  EXPECT_EQ(bcast.layout->columns, 12);
  EXPECT_TRUE(bcast.layout->wrong_is_deviation);
  const auto gather = parse_column_header("   size count type time algbw busbw error time algbw busbw error");
  ASSERT_TRUE(gather.layout);  // the '#' may be lost
  EXPECT_EQ(gather.layout->columns, 11);
  const auto unknown = parse_column_header("#  size count type flavour time algbw busbw #wrong");
  EXPECT_TRUE(unknown.is_header);
  EXPECT_FALSE(unknown.layout);
  EXPECT_NE(unknown.error.find("unrecognised column 'flavour'"), std::string::npos);
  EXPECT_FALSE(parse_column_header("#        (B)    (elements)      (us)  (GB/s)").is_header);
}

TEST(IngestFormats, PerIterationTwentyOneColumns) {
  const std::string header = kHeader21, row = kRow1M21;
  const ParsedLog log = parse_log("# Per-Iteration Report: CUDA event timing\n" + header + row, "i.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.time_us.value, 46.52);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].in_place->time_us.value, 46.44);  // column 14, after the i_* block
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].in_place->busbw.value, 39.51);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].out_of_place.iteration_summary->p99_us.value, 48.00);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].in_place->iteration_summary->min_us.value, 45.00);
  std::vector<Diagnostic> w;
  check_bandwidths(log.runs[0], Collective::kAllReduce, 8, "i.txt", w);
  EXPECT_TRUE(w.empty());
}

TEST(IngestFormats, TimestampedRowsAndCpuTime) {
  const std::string header =
      "#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   "
      "algbw   busbw  "
      "#wrong           timestamp\n";
  const std::string row =
      "     1048576        262144     float     sum      -1    46.52   22.54   39.44       0    46.44   "
      "22.58   39.51  "
      "     0 2025-07-01 12:00:00\n";
  const ParsedLog log = parse_log(header + row, "s.txt");
  ASSERT_EQ(log.runs[0].rows.size(), 1u);
  EXPECT_TRUE(log.runs[0].time_is_cpu);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].in_place->time_us.value, 46.44);
  bool warned = false;
  for (const auto& d : log.warnings) warned |= d.message.find("CPU times") != std::string::npos;
  EXPECT_TRUE(warned);
  // A timestamp that is not one is a bad row.
  const std::string bad =
      "     1048576        262144     float     sum      -1    46.52   22.54   39.44       0    46.44 "
      "  22.58   39.51       0 yesterday noon\n";
  EXPECT_NE(error_of([&] { parse_log(header + bad + row, "s.txt"); }).find("s.txt:2: timestamp is not"),
            std::string::npos);
}

TEST(IngestFormats, MillisecondEraLayout) {
  // 2017-2019: "bytes N type op", time in ms, trailers without '#'.
  // 1048576 B / 47 us = 22.31 GB/s, x 1.75 = 39.04; in-place 1048576 / 46 = 22.80, x 1.75 = 39.90
  const std::string text =
      "#     bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      "
      "res\n"
      "    1048576        262144   float     sum    0.047  22.31  39.04    0e+00    0.046  22.80  39.90    "
      "0e+00\n"
      " Out of bounds values : 0 OK\n"
      " Avg bus bandwidth    : 39.47 \n";
  const ParsedLog log = parse_log(text, "ms.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  const auto& row = log.runs[0].rows[0];
  EXPECT_DOUBLE_EQ(row.out_of_place.time_us.value, 47.0);
  EXPECT_DOUBLE_EQ(row.in_place->time_us.value, 46.0);
  EXPECT_EQ(log.runs[0].trailer_line, 4);
  EXPECT_DOUBLE_EQ(*log.runs[0].avg_busbw, 39.47);
  std::vector<Diagnostic> w;
  check_bandwidths(log.runs[0], Collective::kAllReduce, 8, "ms.txt", w);
  EXPECT_TRUE(w.empty()) << w[0].text();
}

TEST(IngestFormats, ForcedArmFromNcclEnvironmentLines) {
  const std::string text = run_text(
      "host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n"
      "host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL\n");
  const IngestResult r = ingest_text(text);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].algo, "Tree");
  EXPECT_EQ(r.runs[0].proto, "LL");
  EXPECT_EQ(r.runs[0].nodes, 1);
  EXPECT_EQ(r.runs[0].gpus_per_node, 8);
  EXPECT_EQ(r.runs[0].fabric, "unknown");
  EXPECT_EQ(r.sweep.num_contexts(), 2);
  EXPECT_EQ(r.sweep.view().sample(0, arm_slot(Algo::kTree, Proto::kLL), 0), 46.52f);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].text();

  // A manifest that says otherwise is an error naming both places.
  const std::string err =
      error_of([&] { ingest_text(text, "[[run]]\nfile = \"log.txt\"\nalgo = \"Ring\"\n"); });
  EXPECT_NE(err.find("runs.toml:1: algo = Ring contradicts the log: NCCL_ALGO=Tree at log.txt:12"),
            std::string::npos)
      << err;
  // The same value in both is fine; an entry that matches no log is reported.
  const IngestResult same = ingest_text(
      text, "[[run]]\nfile = \"log.txt\"\nalgo = \"tree\"\nproto = \"LL\"\n[[run]]\nfile = \"lgo.txt\"\n");
  ASSERT_EQ(same.warnings.size(), 1u);
  EXPECT_EQ(same.warnings[0].text(), "runs.toml:5: entry for lgo.txt matches none of the logs");
}

TEST(IngestFormats, ShellExportsApplyToLaterRuns) {
  const std::string text = "+ export NCCL_ALGO=Ring\n+ export 'NCCL_PROTO=Simple'\n" + run_text() +
                           "# Collective test concluded: all_reduce_perf\n" + run_text();
  const ParsedLog log = parse_log(text, "log.txt");
  ASSERT_EQ(log.runs.size(), 2u);
  for (const auto& run : log.runs) {
    ASSERT_TRUE(run.algo);
    EXPECT_EQ(run.algo->value, "Ring");
    EXPECT_EQ(run.algo->line, 1);
    EXPECT_EQ(run.proto->value, "Simple");
  }
  // Two runs of one arm: two samples per (context, arm).
  const IngestResult r = ingest_parsed({log}, nullptr, {});
  EXPECT_EQ(r.sweep.samples(), 2);
  bool identical = false;
  for (const auto& d : r.warnings) identical |= d.message.find("exactly the same times") != std::string::npos;
  EXPECT_TRUE(identical);

  const std::string several =
      "mpirun -x NCCL_ALGO=Ring,Tree -x NCCL_PROTO=Simple all_reduce_perf\n" + run_text();
  EXPECT_NE(error_of([&] { ingest_text(several); }).find("log.txt:1: NCCL_ALGO=Ring,Tree"),
            std::string::npos);
  const std::string negated = "export NCCL_ALGO=^NVLS NCCL_PROTO=Simple\n" + run_text();
  EXPECT_NE(error_of([&] { ingest_text(negated); }).find("allows several choices"), std::string::npos);
  const std::string unknown = "export NCCL_ALGO=Star NCCL_PROTO=Simple\n" + run_text();
  EXPECT_NE(error_of([&] { ingest_text(unknown); }).find("NCCL_ALGO=Star is not one of"), std::string::npos);
}

TEST(IngestFormats, JsonOutput) {
  // all_reduce on 2 hosts x 2 ranks, factor 2*3/4 = 1.5:
  //   1048576 B / 50 us = 20.97152 GB/s, busbw 31.45728; 2097152 B / 80 us = 26.2144, busbw 39.3216
  const std::string json = R"({"version":2,"start_time":"2025-07-01 12:00:00",
 "args":["/opt/nccl-tests/build/all_reduce_perf","-b","1M","-e","2M"],
 "env":["PATH=/usr/bin","NCCL_ALGO=Ring","NCCL_PROTO=LL128"],"nccl_version":22602,
 "config":{"nthreads":1,"ngpus":1,"devices":[
  {"rank":0,"group":0,"pid":1,"hostname":"a","device":0,"device_hex":"0000:29:00","device_info":"GPU"},
  {"rank":1,"group":0,"pid":2,"hostname":"a","device":1,"device_hex":"0000:2f:00","device_info":"GPU"},
  {"rank":2,"group":0,"pid":3,"hostname":"b","device":0,"device_hex":"0000:29:00","device_info":"GPU"},
  {"rank":3,"group":0,"pid":4,"hostname":"b","device":1,"device_hex":"0000:2f:00","device_info":"GPU"}]},
 "results":[
  {"size":1048576,"count":262144,"type":"float","redop":"sum","root":"    -1",
   "out_of_place":{"time":50.000000,"alg_bw":20.971520,"bus_bw":31.457280,"nwrong":0.000000},
   "in_place":{"time":50.000000,"alg_bw":20.971520,"bus_bw":31.457280,"nwrong":null},
   "actual_iterations":20,"experiment_name":""},
  {"size":2097152,"count":524288,"type":"float","redop":"sum","root":"    -1",
   "out_of_place":{"time":80.000000,"alg_bw":26.214400,"bus_bw":39.321600,"nwrong":0.000000},
   "in_place":{"time":80.000000,"alg_bw":26.214400,"bus_bw":39.321600,"nwrong":0.000000},
   "actual_iterations":20,"experiment_name":""}],
 "out_of_bounds":{"count":0,"okay":"true"},
 "average_bus_bandwidth":{"bandwidth":35.389440,"okay":"unchecked"},
 "errors":[""],"end_time":"2025-07-01 12:00:05"})";
  const ParsedLog log = parse_log(json, "r.json");
  ASSERT_EQ(log.runs.size(), 1u);
  const auto& run = log.runs[0];
  EXPECT_EQ(run.test_name, "all_reduce_perf");
  EXPECT_EQ(run.algo->value, "Ring");
  EXPECT_EQ(run.algo->how, "JSON env");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_FALSE(run.rows[0].in_place->wrong);
  std::vector<Diagnostic> w;
  check_bandwidths(run, Collective::kAllReduce, 4, "r.json", w);
  EXPECT_TRUE(w.empty()) << w[0].text();
  const IngestResult r = ingest_parsed({log}, nullptr, {});
  ASSERT_TRUE(r.runs[0].used);
  EXPECT_EQ(r.runs[0].nodes, 2);
  EXPECT_EQ(r.runs[0].gpus_per_node, 2);
  EXPECT_EQ(r.sweep.view().sample(1, arm_slot(Algo::kRing, Proto::kLL128), 0), 80.0f);

  // Truncated (the job died while writing) inside line 16: an error naming that line.
  const std::string cut = json.substr(0, json.find("\"in_place\":{\"time\":80"));
  const std::string cut_err = error_of([&] { parse_log(cut, "r.json"); });
  EXPECT_NE(cut_err.find("r.json:16: broken JSON"), std::string::npos) << cut_err;
  EXPECT_NE(error_of([&] { parse_log(R"({"results": [{"size": -5}]})", "r.json"); }).find("results[0].size"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_log(R"({"results": "x"})", "r.json"); }).find("no 'results' list"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_log(R"({"results": []})", "r.json"); }).find("results: empty"),
            std::string::npos);
}

TEST(IngestFormats, StructuralErrorsNameTheLine) {
  // Wrong column count in the middle of a table (not the cut-off last line).
  std::string t =
      kHeader13 + "     1048576        262144     float     sum      -1    46.52   22.54   39.44\n" + kRow2M;
  EXPECT_NE(error_of([&] {
              parse_log(t, "c.txt");
            }).find("c.txt:2: expected 13 columns as in the column header, found 8"),
            std::string::npos);
  // Numbers too large for their type.
  t = kHeader13 + "99999999999999999999999 262144 float sum -1 46.52 22.54 39.44 0 46.44 22.58 39.51 0\n";
  EXPECT_NE(error_of([&] { parse_log(t, "c.txt"); }).find("c.txt:2: size is not a byte count"),
            std::string::npos);
  t = kHeader13 + "1048576 262144 float sum -1 1e999 22.54 39.44 0 46.44 22.58 39.51 0\n";
  EXPECT_NE(error_of([&] { parse_log(t, "c.txt"); }).find("c.txt:2: time is not a non-negative number"),
            std::string::npos);
  t = kHeader13 + "1048576 262144 float sum -1 0.00 22.54 39.44 0 46.44 22.58 39.51 0\n";
  EXPECT_NE(error_of([&] { parse_log(t, "c.txt"); }).find("out-of-place time must be positive"),
            std::string::npos);
  // Sizes going down without a new header.
  t = kHeader13 + kRow2M + kRow1M;
  EXPECT_NE(error_of([&] { parse_log(t, "c.txt"); }).find("c.txt:3: sizes restart at 1048576"),
            std::string::npos);
  // Empty, blank, binary, no table.
  EXPECT_NE(error_of([&] { parse_log("", "e.txt"); }).find("e.txt: empty file"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_log(" \n\n", "e.txt"); }).find("empty file"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_log(std::string("ab\0cd", 5), "b.bin"); }).find("binary data"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_log("hello\nworld\n", "n.txt"); }).find("no nccl-tests results table"),
            std::string::npos);
}

TEST(IngestFormats, RunBoundariesFailuresAndWarnings) {
  // A run cut off after a row, then another run: an error at the second start, not a short run
  // passed as a whole one.
  const std::string no_trailer = "# Collective test starting: all_reduce_perf\n" + kHeader13 + kRow1M;
  EXPECT_NE(
      error_of([&] { parse_log(no_trailer + run_text(), "b.txt"); })
          .find("b.txt:4: 'Collective test starting' line in the middle of the results table of the run at "
                "line 1 (last row at line 3, no trailer)"),
      std::string::npos);
  // At the end of the file a missing trailer is a warning (a truncated log keeps its rows).
  const ParsedLog log = parse_log(no_trailer, "b.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  bool flagged = false;
  for (const auto& d : log.warnings)
    flagged |= d.line == 3 && d.message.find("without its trailer") != std::string::npos;
  EXPECT_TRUE(flagged);

  // A run that fails after printing rows is not data.
  const std::string failed = "export NCCL_ALGO=Ring NCCL_PROTO=Simple\n" +
                             run_text().substr(0, run_text().find("# Out")) +
                             "host: Test NCCL failure common.cu:401 'unhandled system error'\n";
  EXPECT_NE(error_of([&] { ingest_text(failed); }).find("all_reduce_perf failed: host: Test NCCL failure"),
            std::string::npos);

  // #wrong > 0 and a FAILED out-of-bounds line are reported.
  std::string wrong = "export NCCL_ALGO=Ring NCCL_PROTO=LL128\n" + run_text();
  wrong.replace(wrong.find("39.44       0"), 13, "39.44      12");
  wrong.replace(wrong.find("values : 0 OK"), 13, "values : 12 FAILED");
  const IngestResult r = ingest_text(wrong);
  int hits = 0;
  for (const auto& d : r.warnings)
    hits += d.message.find("1 rows report wrong results") != std::string::npos ||
            d.message.find("12 out-of-bounds values") != std::string::npos;
  EXPECT_EQ(hits, 2);

  // A test that is not one collective.
  std::string cube = "export NCCL_ALGO=Ring NCCL_PROTO=LL\n" + run_text();
  cube.replace(cube.find("all_reduce_perf"), 15, "hypercube_perf");
  EXPECT_NE(error_of([&] { ingest_text(cube); }).find("test 'hypercube_perf' is not one NCCL collective"),
            std::string::npos);

  // A bad average in the trailer means rows are missing.
  std::string avg = "export NCCL_ALGO=Ring NCCL_PROTO=LL\n" + run_text();
  avg.replace(avg.find("62.9125"), 7, "70.0000");
  const IngestResult ra = ingest_text(avg);
  bool avg_flagged = false;
  for (const auto& d : ra.warnings)
    avg_flagged |= d.message.find("trailer's average busbw") != std::string::npos;
  EXPECT_TRUE(avg_flagged);
}

TEST(IngestFormats, ValuesBeyondWhatASweepHolds) {
  // 1e300 us is a finite double but not a float; 1e-50 rounds to float 0.
  std::string big = "export NCCL_ALGO=Ring NCCL_PROTO=LL\n" + run_text();
  big.replace(big.find("46.52"), 5, "1e300");
  EXPECT_NE(error_of([&] { ingest_text(big); }).find("log.txt:14: time"), std::string::npos);
  std::string tiny = "export NCCL_ALGO=Ring NCCL_PROTO=LL\n" + run_text();
  tiny.replace(tiny.find("46.52"), 5, "1e-50");
  EXPECT_NE(error_of([&] { ingest_text(tiny); }).find("outside what a sweep can hold"), std::string::npos);
  const std::string shape =
      "[[run]]\nfile = \"log.txt\"\nalgo = \"Ring\"\nproto = \"LL\"\ncollective = "
      "\"allreduce\"\nnodes = 1000000\ngpus_per_node = 1000000\n";
  EXPECT_NE(error_of([&] {
              ingest_text(kHeader13 + kRow1M, shape);
            }).find("runs.toml:1: nodes x gpus_per_node exceeds"),
            std::string::npos);
}

TEST(IngestFormats, SeveralDataTypesInOneTable) {
  // `-d all`: the sizes start over for each type; not an interleave, but not one context per size.
  std::string doubles = kRow1M + kRow2M;
  for (size_t at = doubles.find("float"); at != std::string::npos; at = doubles.find("float", at))
    doubles.replace(at, 5, "double");
  const std::string text =
      "export NCCL_ALGO=Ring NCCL_PROTO=LL\n# Collective test starting: all_reduce_perf\n" + kHeader13 +
      kRow1M + kRow2M + doubles;
  const ParsedLog log = parse_log(text, "d.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 4u);
  const Manifest m = parse_manifest("[[run]]\nfile = \"d.txt\"\nnodes = 1\ngpus_per_node = 8\n", "runs.toml");
  EXPECT_NE(error_of([&] { ingest_parsed({log}, &m, {}); }).find("d.txt:6: rows for another data type"),
            std::string::npos);
}

TEST(IngestFormats, SampleCountsMustMatchAcrossArms) {
  const std::string ring = "export NCCL_ALGO=Ring NCCL_PROTO=Simple\n" + run_text();
  const std::string tree = "export NCCL_ALGO=Tree NCCL_PROTO=Simple\n" + run_text();
  const std::vector<ParsedLog> logs = {parse_log(ring, "ring1.txt"), parse_log(ring, "ring2.txt"),
                                       parse_log(tree, "tree.txt")};
  const std::string err = error_of([&] { ingest_parsed(logs, nullptr, {}); });
  EXPECT_NE(
      err.find("ring1.txt:14: AllReduce 1x8 1048576 B Ring/Simple on unknown has 2 sample(s), but AllReduce "
               "1x8 1048576 B Tree/Simple on unknown (tree.txt:14) has 1"),
      std::string::npos)
      << err;
  // One run per arm is a valid two-arm sweep.
  const IngestResult r = ingest_parsed({logs[0], logs[2]}, nullptr, {});
  EXPECT_EQ(r.sweep.view().mask(0).count(), 2);
}

TEST(IngestFormats, ManifestValidation) {
  EXPECT_NE(error_of([] {
              parse_manifest("[[run]]\nfile = \"a\"\nalgo = \"Star\"\n", "m.toml");
            }).find("m.toml:3: algo 'Star' is not one of"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_manifest("[[run]]\nfile = \"a\"\nnodez = 2\n", "m.toml");
            }).find("m.toml:3: unknown key 'nodez'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_manifest("[[run]]\nfile = \"a\"\nnodes = 0\n", "m.toml");
            }).find("m.toml:3: nodes"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_manifest("[[run]]\nalgo = \"Ring\"\n", "m.toml"); }).find("without a file"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_manifest("[[run]]\nfile = \"a\"\n[[run]]\nfile = \"a\"\n", "m.toml");
            }).find("m.toml:3: second entry for a"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_manifest("[[run]\nfile = 3\n", "m.toml"); }).find("m.toml:1:"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_manifest("title = \"x\"\n", "m.toml"); }).find("unknown top-level key 'title'"),
      std::string::npos);
  EXPECT_NE(
      error_of([] { parse_manifest("[[run]]\nfile = \"a\"\nfabric = \"a,b\"\n", "m.toml"); }).find("fabric"),
      std::string::npos);
  EXPECT_THROW(parse_placement("sideways"), UsageError);
}
