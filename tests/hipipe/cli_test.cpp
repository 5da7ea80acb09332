// `ncclbot hipipe` as a user runs it: JSON on stdout, a table, exit code 2 with one line for bad input,
// and a study into a folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot {
namespace {

using test::run_cli;

TEST(HipipeCli, JsonHasEverySchedulerWithUtilisationAndPlan) {
  const auto r = run_cli("hipipe --fabric h100-ib-a --bytes 1G --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fabric"], "h100-ib-a");
  EXPECT_EQ(j["bytes"].get<double>(), 1073741824.0);
  EXPECT_EQ(j["nodes"], 16);
  ASSERT_EQ(j["schedulers"].size(), 5u);
  std::vector<std::string> names;
  for (const auto& s : j["schedulers"]) {
    names.push_back(s["name"]);
    EXPECT_GT(s["makespan_us"].get<double>(), 0);
    EXPECT_TRUE(s["utilisation"].contains("nvlink"));
    EXPECT_TRUE(s["utilisation"].contains("ib"));
    double sum = 0;
    for (const auto& c : s["chunk_plan"]) sum += c["bytes"].get<double>();
    EXPECT_NEAR(sum, 1073741824.0, 1e-3);
    EXPECT_EQ(s["chunk_plan"].size(), s["chunks"].get<size_t>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"hierarchical", "equal-chunk", "themis", "hipipe",
                                             "equal-chunk-best"}));
  // Unpipelined schedule = the closed form of the sequential sum (10900.5393 us, closed_form_test).
  EXPECT_NEAR(j["schedulers"][0]["makespan_us"].get<double>(), 10900.5393, 1e-3);
  EXPECT_NE(r.err.find("hipipe"), std::string::npos);  // the table goes to stderr with --json
}

TEST(HipipeCli, TableWithoutJson) {
  const auto r = run_cli("hipipe --fabric h100-ib-3d --bytes 256M --max-chunks 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("util_spine"), std::string::npos);
  EXPECT_NE(r.out.find("themis"), std::string::npos);
}

TEST(HipipeCli, BadInputExitsTwoWithOneLine) {
  for (const char* args :
       {"hipipe --fabric h100-ib-a --bytes 0", "hipipe --fabric h100-ib-a --bytes -5",
        "hipipe --fabric h100-ib-a --bytes 12Q", "hipipe --fabric nope --bytes 1M",
        "hipipe --fabric h100-ib-a --bytes 1M --nodes 1 --gpus-per-node 1",
        "hipipe --fabric h100-ib-a --bytes 1M --chunks 0", "hipipe --bytes 1M",
        "hipipe --fabric h100-ib-a --bytes 1M --nodes 0",
        "hipipe --fabric h100-ib-a --bytes 1M --nodes 1000001",
        "hipipe --fabric h100-ib-a --bytes 1M --nodes 2147483647 --gpus-per-node 2147483647",
        "hipipe --fabric h100-ib-a --bytes 1M --gpus-per-node 1025",
        "hipipe --study /no/such/study.toml --out /tmp/x"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.signal, 0) << args;
    EXPECT_NE(r.err.find("ncclbot:"), std::string::npos) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(HipipeCli, ZeroBandwidthFabricFileNamesFileAndLine) {
  const std::string dir = test::temp_dir();
  test::write_file(
      dir + "/zero.toml",
      "name = \"zero\"\nnodes = 2\ngpus_per_node = 8\n[[dimension]]\nname = \"nv\"\nspans = \"gpus\"\n"
      "latency_us = 1\nbandwidth_GBps = 0\nsource = \"x\"\n");
  const auto r = run_cli("hipipe --fabric '" + dir + "/zero.toml' --bytes 1M");
  EXPECT_EQ(r.exit_code, 2);
  // the bandwidth_GBps line
  EXPECT_NE(r.err.find("zero.toml:8:"), std::string::npos) << r.err;
}

TEST(HipipeCli, StudyWritesTablesAndSummary) {
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/study.toml",
                   "sizes = [\"1M\", \"1G\"]\n[options]\nmax_chunks = 16\n"
                   "[[topology]]\nfabric = \"h100-ib-a\"\nnodes = [1, 16]\n"
                   "[[topology]]\nfabric = \"h100-ib-3d\"\nnodes = 32\n");
  const auto r =
      run_cli("hipipe --study '" + dir + "/study.toml' --out '" + dir + "/out' --no-figure --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cases"], 6);
  for (const char* b : {"hierarchical", "equal-chunk", "themis", "equal-chunk-best"}) {
    EXPECT_GE(j["reduction_vs"][b]["min"].get<double>(), b == std::string("hierarchical") ? -1e-12 : -1.0)
        << b;
    EXPECT_LT(j["reduction_vs"][b]["max"].get<double>(), 1.0) << b;
  }
  EXPECT_EQ(j["paper"]["mean_reduction"].get<double>(), 0.2885);
  const std::string csv = test::read_all(dir + "/out/hipipe_cases.csv");
  // Header plus 6 cases x 5 schedulers.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 31);
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/hipipe_summary.md"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/hipipe_summary.json"));
}

TEST(HipipeCli, BadStudyFileNamesTheLine) {
  const std::string dir = test::temp_dir();
  test::write_file(dir + "/study.toml", "sizes = [1024]\n[[topology]]\nfabric = \"nope\"\n");
  auto r = run_cli("hipipe --study '" + dir + "/study.toml' --out '" + dir + "/out' --no-figure");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("study.toml:2:"), std::string::npos) << r.err;
  test::write_file(dir + "/study.toml", "sizes = [0]\n[[topology]]\nfabric = \"h100-ib-a\"\n");
  r = run_cli("hipipe --study '" + dir + "/study.toml' --out '" + dir + "/out' --no-figure");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("study.toml:1:"), std::string::npos) << r.err;
}

// Every key of every table is checked: a misspelt one is an error at its line, never ignored; and a
// fabric file that is not there is named at the study line that names it.
TEST(HipipeCli, StudyFileUnknownKeysAndMissingFabricFilesNameTheStudyLine) {
  const std::string dir = test::temp_dir();
  const std::string good = "sizes = [1024]\n[[topology]]\nfabric = \"h100-ib-a\"\nnodes = [2]\n";
  const std::pair<std::string, std::string> cases[] = {
      {"bogus = 1\n" + good, "study.toml:1: unknown key 'bogus'"},
      {good + "[optionz]\nmax_chunks = 4\n", "study.toml:5: unknown key 'optionz'"},
      {good + "nodez = [4]\n", "study.toml:5: unknown key 'nodez'"},
      {good + "gpus = 4\n", "study.toml:5: unknown key 'gpus'"},
      {"sizes = [1024]\n[[topology]]\nfabric = \"../../no/such/fabric.toml\"\n",
       "study.toml:2: ../../no/such/fabric.toml: no such fabric file"}};
  for (const auto& [text, message] : cases) {
    test::write_file(dir + "/study.toml", text);
    const auto r = run_cli("hipipe --study '" + dir + "/study.toml' --out '" + dir + "/out' --no-figure");
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_NE(r.err.find(message), std::string::npos) << text << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ncclbot
