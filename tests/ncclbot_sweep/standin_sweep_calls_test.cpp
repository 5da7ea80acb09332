// The calls ncclbot-sweep makes, as the stand-in NCCL logs them: the order of every timed round is a
// seeded permutation that changes per round, is the same on every rank and rerun; every forced call
// runs exactly the kernel asked for; a failing rank or a wrong result ends the run with a message
// naming the rank, and the contexts finished before stay written; bad input is exit 2.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot_sweep/standin_sweep_run.hpp"

namespace {

using ncclbot::test::CliResult;
using ncclbot::test::read_all;
using ncclbot::test::run_sweep_standin;
using ncclbot::test::temp_dir;

// allreduce at two sizes, Tree and Ring x 3 protocols and NCCL's own pick: 7 calls a round.
constexpr int kCallsPerRound = 7, kWarmup = 2, kRounds = 5;
constexpr int kCallsPerContext = kCallsPerRound * (1 + kWarmup + kRounds);  // probe, warm-up, timed

std::string calls_args(const std::string& dir, int seed) {
  return "--bytes 4096,65536 --algos tree,ring --iterations " + std::to_string(kRounds) + " --warmup " +
         std::to_string(kWarmup) + " --seed " + std::to_string(seed) + " --out '" + dir + "/sweep.csv'";
}

std::vector<std::string> log_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_all(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The selection asked for by each logged call ("auto" for NCCL's own pick).
std::string asked(const std::string& line) {
  std::istringstream words(line);
  std::string func, bytes, selection;
  words >> func >> bytes >> selection;
  return selection;
}

// The timed rounds of context `c`: each the sequence of selections asked for.
std::vector<std::vector<std::string>> timed_rounds(const std::vector<std::string>& log, int c) {
  std::vector<std::vector<std::string>> rounds;
  const int first = c * kCallsPerContext + kCallsPerRound * (1 + kWarmup);
  for (int r = 0; r < kRounds; ++r) {
    rounds.emplace_back();
    for (int k = 0; k < kCallsPerRound; ++k)
      rounds.back().push_back(asked(log.at(size_t(first + r * kCallsPerRound + k))));
  }
  return rounds;
}

std::vector<std::string> run_logged(const std::string& dir, int seed) {
  const CliResult r = run_sweep_standin(calls_args(dir, seed), {"NCCLBOT_STANDIN_LOG=" + dir + "/calls"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return log_lines(dir + "/calls.rank0");
}

TEST(SweepStandin, EachRoundIsASeededPermutationThatChanges) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const std::vector<std::string> log = run_logged(dir, 11);
  ASSERT_EQ(log.size(), size_t(2 * kCallsPerContext));
  for (int c = 0; c < 2; ++c) {
    const auto rounds = timed_rounds(log, c);
    const std::multiset<std::string> arms(rounds[0].begin(), rounds[0].end());
    EXPECT_EQ(arms.size(), size_t(kCallsPerRound));
    EXPECT_EQ(std::set<std::string>(arms.begin(), arms.end()).size(), size_t(kCallsPerRound));  // no repeats
    EXPECT_EQ(arms.count("auto"), 1u);
    std::set<std::vector<std::string>> distinct;
    for (const auto& round : rounds) {
      EXPECT_EQ(std::multiset<std::string>(round.begin(), round.end()), arms);
      distinct.insert(round);
    }
    // 7 calls have 5,040 orders: 5 rounds repeat one with probability 0.2% (the seed fixes the outcome).
    EXPECT_EQ(distinct.size(), size_t(kRounds)) << "context " << c;
  }
  if (ncclbot::test::kStandinRanks > 1) {
    EXPECT_EQ(log_lines(dir + "/calls.rank1"), log);  // else the ranks would wait on each other
  }
  const std::string again = temp_dir(), other = temp_dir();
  EXPECT_EQ(run_logged(again, 11), log);
  EXPECT_NE(timed_rounds(run_logged(other, 12), 0), timed_rounds(log, 0));
}

TEST(SweepStandin, EveryForcedCallRunsTheKernelAskedFor) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  for (const std::string& line : run_logged(dir, 3)) {
    std::istringstream words(line);
    std::string func, bytes, selection, ran;
    words >> func >> bytes >> selection >> ran;
    if (selection == "auto") continue;
    // The selection is the kernel's registry name, with the names it prefixes excluded.
    EXPECT_EQ(selection.substr(0, selection.find('+')), ran) << line;
  }
}

TEST(SweepStandin, AFailingRankEndsTheRunAndTheFinishedContextStays) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const int rank = ncclbot::test::kStandinRanks - 1;
  // The third call of the second context (in its probe).
  const CliResult r = run_sweep_standin(
      calls_args(dir, 1), {"NCCLBOT_STANDIN_FAIL_RANK=" + std::to_string(rank),
                           "NCCLBOT_STANDIN_FAIL_CALL=" + std::to_string(kCallsPerContext + 3)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ncclbot-sweep: rank " + std::to_string(rank) + " failed on AllReduce 65536 B"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("stand-in: injected failure at call " + std::to_string(kCallsPerContext + 3)),
            std::string::npos)
      << r.err;
  const ncclbot::Sweep sweep = ncclbot::read_sweep_csv(dir + "/sweep.csv");
  ASSERT_EQ(sweep.num_contexts(), 1);
  EXPECT_EQ(sweep.context(0).bytes, 4096u);
  EXPECT_EQ(sweep.samples(), kRounds);
  EXPECT_EQ(sweep.view().mask(0).count(), 6);
}

TEST(SweepStandin, AWrongResultEndsTheRun) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const CliResult r = run_sweep_standin(calls_args(dir, 1), {"NCCLBOT_STANDIN_CORRUPT=Ring/Simple"});
  EXPECT_EQ(r.exit_code, 1);
  // Every rank's first element is one too many: 1 + ... + ranks, plus 1.
  const int ranks = ncclbot::test::kStandinRanks;
  EXPECT_NE(r.err.find("failed on AllReduce 4096 B, Ring/Simple: wrong result: element 0 is " +
                       std::to_string(ranks * (ranks + 1) / 2 + 1) + ", expected " +
                       std::to_string(ranks * (ranks + 1) / 2)),
            std::string::npos)
      << r.err;
}

TEST(SweepStandin, BadInputIsExitTwoWithTheOptionNamed) {
  SKIP_WITHOUT_SWEEP_STANDIN();
  const std::string dir = temp_dir();
  const std::string out = " --out '" + dir + "/s.csv'";
  const std::pair<std::string, std::string> cases[] = {
      {"--bytes 64 --algos ring,foo" + out, "--algos: 'foo' is not one of Tree, Ring"},
      {"--bytes 64 --channels 0,65" + out, "--channels: '65' is not one of 0..64"},
      {"--bytes 64 --protos LL,XL" + out, "--protos: 'XL' is not one of LL, LL128, Simple"},
      {"--bytes 6" + out, "--bytes: 6 for AllReduce"},
      {"--bytes 64 --collectives alltoall" + out, "--collectives: AlltoAll is not swept"},
      {"--bytes 64 --out '" + dir + "/no/such/folder/s.csv'", "no/such/folder"},
      {"--bytes 64 --fabric 'a b'" + out, "--fabric: 'a b' is not 1-64 characters"},
  };
  for (const auto& [args, message] : cases) {
    const CliResult r = run_sweep_standin(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace
