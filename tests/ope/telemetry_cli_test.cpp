// `ncclbot telemetry` on a log the real plugin wrote (plugin-check --log, egreedy eps = 0.3, a
// stationary simulated sweep): the counts are the log's own (recounted here from the records), the
// time saved against NCCL's choice holds the truth (the sweep's mean of NCCL's pick minus the
// measured latency, summed over the logged calls) inside its interval, and the report and its
// figure are written.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {}  // namespace

TEST(TelemetryCli, CountsAreTheLogsAndTheSavingHoldsTheTruth) {
  const std::string dir = temp_dir(), sweep_path = dir + "/sweep.csv", log_path = dir + "/d.log";
  ASSERT_EQ(run_cli("synth --fabric h100-ib-a --seed 3 --nodes 4 --collectives allreduce --samples 8 "
                    "--observation off --out '" +
                    sweep_path + "'")
                .exit_code,
            0);
  const CliResult p =
      run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + sweep_path +
              "' --policy 'egreedy:eps=0.3,decay=0,n0=4' --seed 4 --horizon 300 --log '" + log_path + "'");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const CliResult t = run_cli("telemetry '" + log_path + "' --out '" + dir + "/report' --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto paths = nlohmann::json::parse(t.out);
  const auto doc = nlohmann::json::parse(read_all(paths["telemetry"]));

  // Recount from the records.
  const DecisionLogData log = read_decision_logs({log_path});
  size_t departures = 0;
  for (const auto& r : log.calls) departures += r.slot != r.nccl_slot;
  EXPECT_EQ(doc["total"]["calls"], log.calls.size());
  EXPECT_EQ(doc["total"]["departures"], departures);
  EXPECT_EQ(doc["total"]["contexts_without_estimate"], 0);

  // The truth of the saving: NCCL's pick's sweep mean minus the measured latency, over every call.
  const Sweep sweep = read_sweep_csv(sweep_path);
  const SweepView v = sweep.view();
  std::map<uint64_t, int> by_bytes;
  for (int c = 0; c < sweep.num_contexts(); ++c) by_bytes[sweep.context(c).bytes] = c;
  double truth = 0;
  for (const auto& r : log.calls) truth += v.mean(by_bytes.at(r.bytes), r.nccl_slot) - r.latency_us;
  const auto& saved = doc["total"]["saved_us"];
  EXPECT_LE(saved["ci"][0].get<double>(), truth);
  EXPECT_GE(saved["ci"][1].get<double>(), truth);
  // Exploring 30% of the time costs more than the better arms it finds save: a loss, and said so.
  EXPECT_LT(truth, 0.0);
  EXPECT_LT(saved["value"].get<double>(), 0.0);
  EXPECT_GT(doc["total"]["contexts_lost"].get<int>(), 0);

  const std::string md = read_all(paths["report_md"]);
  EXPECT_NE(md.find("## Was it worth it?"), std::string::npos);
  EXPECT_NE(md.find("## Where it lost"), std::string::npos);
  EXPECT_NE(md.find("ncclbot telemetry"), std::string::npos);
  const std::string html = read_all(paths["report_html"]);
  EXPECT_NE(html.find("src=\"data:image/png;base64,iVBORw0KGgo"), std::string::npos) << t.err;
}

TEST(TelemetryCli, ABadLogIsExit2) {
  const std::string junk = temp_dir() + "/junk.log";
  write_file(junk, "not a log at all");
  const CliResult r = run_cli("telemetry '" + junk + "' --out '" + temp_dir() + "/r'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an ncclbot decision log"), std::string::npos) << r.err;
}
