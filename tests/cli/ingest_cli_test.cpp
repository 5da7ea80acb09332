// `ncclbot ingest` as a user runs it: the summary contract, exit codes, and a malformed-input
// corpus (truncations, garbage, wrong column counts, huge numbers, seeded mutations of the project's
// fixtures and of the real logs) that must end in exit 0 or 2, never a signal. The real logs are
// third-party and may be absent: the tests that read them skip, and the fixtures keep every contract
// covered without them.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "support/run_cli.hpp"
#include "support/shared_logs.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

const std::string kRing = "h100_1node_8gpu_allreduce_ring_forced_8B-8G.txt";
const std::string kRealInterleaved = "h100_2x1node_8gpu_allreduce_ring_forced_1M-8G_INTERLEAVED_BAD.txt";
const std::string kRealFailed = "h100_2node_8gpu_alltoall_FAILED_sendrecv_degraded.txt";

// The project's own synthetic logs (tests/data/nccl-tests/README.md says what each one is).
std::string fixtures_dir() {
  return std::string(NCCLBOT_TEST_DATA_DIR) + "/nccl-tests/";
}

std::string q(const std::string& s) {
  return "'" + s + "'";
}

// The .txt logs in `dir`, sorted so the seeded corpus is the same on every machine.
std::vector<std::string> logs_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".txt") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Labels every log so mutated copies get past the arm check into the deeper paths.
std::string manifest_for(const std::vector<std::string>& names) {
  std::string m;
  for (const auto& n : names) m += "[[run]]\nfile = \"" + n + "\"\nalgo = \"Ring\"\nproto = \"Simple\"\n";
  return m;
}

using Corpus = std::vector<std::pair<std::string, std::string>>;  // (file name, content)

// Seeded truncations, a dropped column and random byte mutations of each log in `dir`.
void add_mutations(const std::string& dir, const std::vector<std::string>& names, std::mt19937_64& rng,
                   Corpus& corpus) {
  for (const auto& n : names) {
    const std::string text = read_all(dir + n);
    for (int k = 0; k < 3; ++k) corpus.push_back({n, text.substr(0, rng() % (text.size() + 1))});
    std::string dropped = text;
    const size_t at = dropped.find("  sum  ");
    if (at != std::string::npos) dropped.erase(at, 7);
    corpus.push_back({n, dropped});
    std::string mutated = text;
    for (int k = 0; k < 20; ++k) mutated[rng() % mutated.size()] = "0123456789 #.-e\nN/A:"[rng() % 20];
    corpus.push_back({n, mutated});
  }
}

// Runs `ncclbot ingest` on each entry of the corpus, every other one with a manifest labelling
// `names`; each must end in exit 0 or 2 with a one-line reason, never a signal. Returns how many
// were accepted.
int ingest_corpus(const Corpus& corpus, const std::vector<std::string>& names) {
  const std::string dir = temp_dir();
  write_file(dir + "/runs.toml", manifest_for(names));
  int accepted = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string sub = dir + "/c" + std::to_string(i);
    std::filesystem::create_directories(sub);
    write_file(sub + "/" + corpus[i].first, corpus[i].second);
    const std::string manifest = i % 2 ? " --manifest " + q(dir + "/runs.toml") : "";
    const auto r = run_cli("ingest " + q(sub + "/" + corpus[i].first) + manifest + " --skip-unforced --out " +
                           q(sub + "/s.csv"));
    EXPECT_EQ(r.signal, 0) << corpus[i].first << " #" << i << ": " << r.err;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << corpus[i].first << " #" << i << ": " << r.err;
    if (r.exit_code == 2) {
      // One line naming the file and a reason.
      EXPECT_NE(r.err.find("ncclbot: "), std::string::npos);
    }
    accepted += r.exit_code == 0;
  }
  return accepted;
}

// Seeded in-place edits (insertions, deletions, substitutions, duplicated lines) of the logs in
// `dir`, parsed and ingested through the library: anything but an InputError or UsageError is a
// bug. Returns how many edited logs still parsed.
int mutate_in_process(const std::string& dir, const std::vector<std::string>& names, uint64_t seed,
                      int iterations) {
  const nccl_tests::Manifest manifest =
      nccl_tests::parse_manifest(manifest_for(names), "/nonexistent/runs.toml");
  std::mt19937_64 rng(seed);
  const std::string alphabet = "0123456789 #.-e+\nN/A:Rank on\tsize";
  int parsed = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    const std::string& n = names[rng() % names.size()];
    std::string text = read_all(dir + n);
    const int edits = 1 + int(rng() % 8);
    for (int k = 0; k < edits; ++k) {
      const size_t pos = rng() % (text.size() + 1);
      switch (rng() % 4) {
        case 0:
          text.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (pos < text.size()) text.erase(pos, 1 + rng() % 40);
          break;
        case 2:
          if (pos < text.size()) text[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 3: {  // duplicate a line
          const size_t start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
          const size_t end = text.find('\n', pos);
          if (start != std::string::npos && end != std::string::npos)
            text.insert(end, text.substr(start, end - start));
        }
      }
    }
    try {
      const auto log = nccl_tests::parse_log(text, n);
      ++parsed;
      nccl_tests::IngestOptions o;
      o.skip_unforced = o.skip_failed = true;
      nccl_tests::ingest_parsed({log}, &manifest, o);
    } catch (const InputError&) {
    } catch (const UsageError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << iter << " on " << n << ": " << e.what();
    }
  }
  return parsed;
}

}  // namespace

TEST(IngestCli, SummaryAndSweep) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRing);
  const std::string ring = shared_logs_dir() + kRing;
  const std::string dir = temp_dir();
  write_file(dir + "/runs.toml", "[[run]]\nfile = \"" + ring +
                                     "\"\nalgo = \"Ring\"\nproto = \"Simple\"\nfabric = \"h100-nvl\"\n");
  const auto r =
      run_cli("ingest --manifest " + q(dir + "/runs.toml") + " --out " + q(dir + "/out/s.csv") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs_found"], 1);
  EXPECT_EQ(j["runs_used"], 1);
  EXPECT_EQ(j["rows"], 31);
  EXPECT_EQ(j["contexts"], 31);
  EXPECT_EQ(j["samples"], 1);
  EXPECT_EQ(j["warnings"], 0);
  EXPECT_EQ(j["runs"][0]["algo"], "Ring");
  EXPECT_EQ(j["runs"][0]["nodes"], 1);
  EXPECT_EQ(j["runs"][0]["gpus_per_node"], 8);
  // Line 18 of the log: 8 B out-of-place 34.98 us.
  const std::string csv = read_all(dir + "/out/s.csv");
  EXPECT_NE(csv.find("h100-nvl,AllReduce,1,8,8,Ring,Simple,0,34.98\n"), std::string::npos)
      << csv.substr(0, 300);
  EXPECT_EQ(read_sweep_csv(dir + "/out/s.csv").num_contexts(), 31);
  const auto inspect = run_cli("inspect " + q(dir + "/out/s.csv") + " --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(nlohmann::json::parse(inspect.out)["contexts"], 31);

  // Human summary on stdout without --json; both placements double the samples.
  const auto h = run_cli("ingest " + q(ring) + " --manifest " + q(dir + "/runs.toml") +
                         " --placement both --out " + q(dir + "/b.csv"));
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("ingested 1 of 1 runs from 1 file(s): 62 rows, 31 contexts, 2 sample(s) per arm"),
            std::string::npos)
      << h.out;
}

TEST(IngestCli, SummaryAndSweepFromAFixture) {
  // srun_prefixed.txt: forced Ring/Simple by its shell trace (lines 1-4), 2 hosts x 2 ranks (lines
  // 13-16), six sizes from 1 MiB (lines 21-26).
  const std::string log = fixtures_dir() + "srun_prefixed.txt";
  const std::string dir = temp_dir();
  const auto r = run_cli("ingest " + q(log) + " --fabric gh200-x --out " + q(dir + "/out/s.csv") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs_found"], 1);
  EXPECT_EQ(j["runs_used"], 1);
  EXPECT_EQ(j["rows"], 6);
  EXPECT_EQ(j["contexts"], 6);
  EXPECT_EQ(j["samples"], 1);
  EXPECT_EQ(j["warnings"], 0);
  EXPECT_EQ(j["runs"][0]["algo"], "Ring");
  EXPECT_EQ(j["runs"][0]["proto"], "Simple");
  EXPECT_EQ(j["runs"][0]["nodes"], 2);
  EXPECT_EQ(j["runs"][0]["gpus_per_node"], 2);
  // Line 21: 1048576 B out-of-place 96.40 us.
  const std::string csv = read_all(dir + "/out/s.csv");
  EXPECT_NE(csv.find("gh200-x,AllReduce,2,2,1048576,Ring,Simple,0,96.4\n"), std::string::npos)
      << csv.substr(0, 300);
  EXPECT_EQ(read_sweep_csv(dir + "/out/s.csv").num_contexts(), 6);

  const auto h = run_cli("ingest " + q(log) + " --placement both --out " + q(dir + "/b.csv"));
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("ingested 1 of 1 runs from 1 file(s): 12 rows, 6 contexts, 2 sample(s) per arm"),
            std::string::npos)
      << h.out;
}

TEST(IngestCli, BadLogsExitTwoWithFileLineAndReason) {
  const std::string dir = temp_dir();
  const std::string good = fixtures_dir() + "srun_prefixed.txt";
  const auto inter =
      run_cli("ingest " + q(fixtures_dir() + "interleaved_headers.txt") + " --out " + q(dir + "/s.csv"));
  EXPECT_EQ(inter.exit_code, 2);
  EXPECT_NE(inter.err.find("interleaved_headers.txt:6: second 'nccl-tests version' line"), std::string::npos)
      << inter.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.csv"));

  // The failed alltoall is skipped, and the all_reduce after it forces no arm.
  const auto failed = run_cli("ingest " + q(fixtures_dir() + "failed_run_aborted.txt") +
                              " --skip-failed --skip-unforced --out " + q(dir + "/s.csv"));
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_NE(failed.err.find("warning: "), std::string::npos);
  EXPECT_NE(failed.err.find("every run was skipped"), std::string::npos) << failed.err;

  EXPECT_EQ(run_cli("ingest " + q(good) + " --placement sideways --out " + q(dir + "/s.csv")).exit_code, 2);
  EXPECT_EQ(run_cli("ingest " + q(good) + " --fabric 'a b' --out " + q(dir + "/s.csv")).exit_code, 2);
  EXPECT_EQ(run_cli("ingest --out " + q(dir + "/s.csv")).exit_code, 2);
  const auto missing = run_cli("ingest " + q(dir + "/nope.txt") + " --out " + q(dir + "/s.csv"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.txt: cannot open: no such file"), std::string::npos);
  const auto folder = run_cli("ingest " + q(dir) + " --out " + q(dir + "/s.csv"));
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.err.find("is a folder, not a file"), std::string::npos) << folder.err;
  write_file(dir + "/bad.toml", "[[run]]\nfile = \"x\"\nalgo = \"Warp\"\n");
  const auto bad_manifest =
      run_cli("ingest " + q(good) + " --manifest " + q(dir + "/bad.toml") + " --out " + q(dir + "/s.csv"));
  EXPECT_EQ(bad_manifest.exit_code, 2);
  EXPECT_NE(bad_manifest.err.find("bad.toml:3: algo 'Warp'"), std::string::npos) << bad_manifest.err;
}

TEST(IngestCli, BadRealLogsExitTwoWithFileLineAndReason) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRealInterleaved, kRealFailed);
  const std::string dir = temp_dir();
  const auto inter =
      run_cli("ingest " + q(shared_logs_dir() + kRealInterleaved) + " --out " + q(dir + "/s.csv"));
  EXPECT_EQ(inter.exit_code, 2);
  EXPECT_NE(inter.err.find("INTERLEAVED_BAD.txt:6: second 'nccl-tests version' line"), std::string::npos)
      << inter.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.csv"));

  const auto failed = run_cli("ingest " + q(shared_logs_dir() + kRealFailed) +
                              " --skip-failed --skip-unforced --out " + q(dir + "/s.csv"));
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_NE(failed.err.find("warning: "), std::string::npos);
  EXPECT_NE(failed.err.find("every run was skipped"), std::string::npos) << failed.err;
}

TEST(IngestCli, MalformedCorpusNeverCrashes) {
  const std::vector<std::string> names = logs_in(fixtures_dir());
  ASSERT_EQ(names.size(), 10u);
  std::mt19937_64 rng(20261129);
  Corpus corpus;
  corpus.push_back({"empty.txt", ""});
  corpus.push_back({"blank.txt", "\n \n\t\n"});
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(char(rng() & 0xff));
  corpus.push_back({"garbage.bin", garbage});
  corpus.push_back({"wide.txt", "#  size count type redop root time algbw busbw #wrong\n" +
                                    std::string("1 2 float sum -1 ") + std::string(100000, '9') +
                                    " 1 1 0\n"});
  corpus.push_back({"huge.txt",
                    "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                    "18446744073709551615 18446744073709551615 float sum -9223372036854775808 1e308 "
                    "1e308 1e308 1e308 1e308 1e308 1e308 1e308\n"});
  corpus.push_back({"brace.txt", "{\"results\": [{\"size\": 1e999}]}"});
  add_mutations(fixtures_dir(), names, rng, corpus);
  EXPECT_GT(ingest_corpus(corpus, names), 0);  // the corpus also exercises the success path
}

TEST(IngestCli, MalformedRealLogCorpusNeverCrashes) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRing, kRealInterleaved, kRealFailed);
  const std::vector<std::string> names = logs_in(shared_logs_dir());
  ASSERT_EQ(names.size(), 12u);
  std::mt19937_64 rng(20261129);
  Corpus corpus;
  add_mutations(shared_logs_dir(), names, rng, corpus);
  EXPECT_GT(ingest_corpus(corpus, names), 0);
}

TEST(IngestCli, InProcessMutationsOnlyRaiseInputErrors) {
  // Many more seeded mutations through the library than the CLI corpus can afford.
  EXPECT_GT(mutate_in_process(fixtures_dir(), logs_in(fixtures_dir()), 7, 3000), 300);
}

TEST(IngestCli, InProcessMutationsOfRealLogsOnlyRaiseInputErrors) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRing, kRealInterleaved, kRealFailed);
  EXPECT_GT(mutate_in_process(shared_logs_dir(), logs_in(shared_logs_dir()), 7, 3000), 300);
}
