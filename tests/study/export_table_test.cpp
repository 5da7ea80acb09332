// `ncclbot export-table` round trip: the decisions a finished study records for a policy, written
// in the plugin's table format and in NCCL's example CSV format, then read back by the built tuner
// plugin (loaded as NCCL loads it, NCCLBOT_MODE=table) — for every score context the plugin must
// pick exactly the arm results.json says, and a size between two measured sizes must take the
// decision of the nearer one on a log scale.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/names.hpp"
#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

struct StudyRun {
  std::string dir;
  nlohmann::json results;
};

const StudyRun& study_run() {
  static const StudyRun run = [] {
    StudyRun r;
    r.dir = temp_dir() + "/study";
    const CliResult c = run_cli("run '" + kTinyStudy + "' --out '" + r.dir + "' --no-figures");
    EXPECT_EQ(c.exit_code, 0) << c.err;
    r.results = nlohmann::json::parse(read_all(r.dir + "/results.json"));
    return r;
  }();
  return run;
}

// Every arm offered at the same cost: the plugin's pick is then exactly the table's arm.
int plugin_pick(int coll, uint64_t bytes, int nodes, int ranks) {
  void* ctx = nullptr;
  EXPECT_EQ(plugin().v5->init(&ctx, 7, size_t(ranks), size_t(nodes), recording_logger, nullptr, nullptr),
            kNcclSuccess);
  CostTable7x3 t;
  for (auto& row : t.t)
    for (float& v : row) v = 1.0f;
  int nch = 0;
  EXPECT_EQ(plugin().v5->getCollInfo(ctx, coll, size_t(bytes), 1, t.ptr(), 7, 3, 0, &nch), kNcclSuccess);
  EXPECT_EQ(plugin().v5->finalize(ctx), kNcclSuccess);
  return t.pick();
}

int slot_of(const std::string& decision) {
  const size_t slash = decision.find('/');
  return arm_slot(*parse_algo(decision.substr(0, slash)), *parse_proto(decision.substr(slash + 1)));
}

void check_round_trip(const std::string& format, const std::string& policy) {
  const StudyRun& run = study_run();
  const std::string table = run.dir + "/" + policy + "." + format + ".csv";
  const CliResult c = run_cli("export-table --study '" + run.dir + "' --policy " + policy + " --format " +
                              format + " --out '" + table + "'");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EnvVar mode("NCCLBOT_MODE", "table"), path("NCCLBOT_TABLE", table);
  ASSERT_TRUE(plugin().ok());
  std::map<std::string, const nlohmann::json*> scenarios;
  for (const auto& s : run.results["scenarios"]) scenarios[s["name"]] = &s;
  int checked = 0;
  for (const auto& score : run.results["scores"]) {
    if (score["policy"] != policy) continue;
    const auto& ctxs = (*scenarios[score["scenario"]])["score"]["context_list"];
    for (size_t i = 0; i < ctxs.size(); ++i) {
      const auto& c = ctxs[i];
      const int coll = int(*parse_collective(c["collective"].get<std::string>()));
      const int nodes = c["nodes"], ranks = nodes * c["gpus_per_node"].get<int>();
      const uint64_t bytes = c["bytes"];
      const int want = slot_of(score["decisions"][i]);
      EXPECT_EQ(plugin_pick(coll, bytes, nodes, ranks), want) << format << " " << c.dump();
      // Just below the next measured size (sizes are powers of two): the split is at the
      // geometric mean, so 1.3x still belongs to this size and 1.6x to the next.
      if (i + 1 < ctxs.size() && ctxs[i + 1]["bytes"] == bytes * 2 && ctxs[i + 1]["nodes"] == nodes) {
        EXPECT_EQ(plugin_pick(coll, bytes + bytes * 3 / 10, nodes, ranks), want) << c.dump();
        EXPECT_EQ(plugin_pick(coll, bytes + bytes * 6 / 10, nodes, ranks), slot_of(score["decisions"][i + 1]))
            << c.dump();
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}

TEST(ExportTable, NcclbotFormatRoundTripsThroughThePlugin) {
  check_round_trip("ncclbot", "UCB1");
}
TEST(ExportTable, NcclCsvFormatRoundTripsThroughThePlugin) {
  check_round_trip("nccl-csv", "AUTO");
}

// --json says what was written: the row count is the table's own (data lines, not comments or the
// header).
TEST(ExportTable, JsonNamesTheTableAndItsRows) {
  const StudyRun& run = study_run();
  const std::string table = run.dir + "/UCB1.json-check.csv";
  const CliResult c =
      run_cli("export-table --study '" + run.dir + "' --policy UCB1 --out '" + table + "' --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["policy"], "UCB1");
  EXPECT_EQ(j["format"], "ncclbot");
  EXPECT_EQ(j["out"], table);
  std::istringstream in(read_all(table));
  size_t data = 0;
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    ++data;
  }
  EXPECT_GT(data, 0u);
  EXPECT_EQ(j["rows"].get<size_t>(), data);
}

TEST(ExportTable, UnknownPolicyAndMissingStudyAreUsageErrors) {
  const StudyRun& run = study_run();
  const CliResult a = run_cli("export-table --study '" + run.dir + "' --policy NOPE --out /dev/null");
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("no policy 'NOPE' (it has: AUTO, greedy, UCB1, ETC)"), std::string::npos) << a.err;
  const CliResult b = run_cli("export-table --study /nonexistent --policy AUTO --out /dev/null");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("/nonexistent/results.json"), std::string::npos) << b.err;
}

// A copy of the finished study folder to edit.
std::string study_copy() {
  const std::string dir = temp_dir() + "/copy";
  std::filesystem::copy(study_run().dir, dir, std::filesystem::copy_options::recursive);
  return dir;
}

// Flips the first decision of the first "decisions" list in `j` to another arm; true when one was.
bool flip_first_decision(nlohmann::json& j) {
  if (j.is_object() && j.contains("decisions") && j["decisions"].is_array() && !j["decisions"].empty()) {
    auto& d = j["decisions"][0];
    d = d == "Ring/Simple" ? "Tree/LL" : "Ring/Simple";
    return true;
  }
  if (j.is_structured())
    for (auto& v : j)
      if (flip_first_decision(v)) return true;
  return false;
}

TEST(ExportTable, AResultsJsonEditedAfterTheRunIsRefused) {
  const std::string dir = study_copy();
  nlohmann::json results = nlohmann::json::parse(read_all(dir + "/results.json"));
  ASSERT_TRUE(flip_first_decision(results));
  write_file(dir + "/results.json", results.dump(1) + "\n");
  const CliResult c =
      run_cli("export-table --study '" + dir + "' --policy UCB1 --out '" + dir + "/../table.csv'");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find(dir + "/results.json: changed after `ncclbot run` wrote it"), std::string::npos)
      << c.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/../table.csv"));
}

TEST(ExportTable, AFolderWithoutARecordedChecksumIsReadWithAWarning) {
  const std::string dir = study_copy();
  std::istringstream marker(read_all(dir + "/.ncclbot-run"));
  std::string kept, line;
  while (std::getline(marker, line))
    if (line.rfind("# sha256 ", 0) != 0) kept += line + "\n";
  ASSERT_NE(kept, read_all(dir + "/.ncclbot-run"));  // the run recorded a checksum
  write_file(dir + "/.ncclbot-run", kept);
  const CliResult c =
      run_cli("export-table --study '" + dir + "' --policy UCB1 --out '" + dir + "/../table.csv'");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("warning: " + dir + " records no checksum of results.json"), std::string::npos)
      << c.err;
}

}  // namespace
}  // namespace ncclbot::test
