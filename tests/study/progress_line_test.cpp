// The progress line of replay, tune and hipipe --study (base/progress_line.hpp): its text, silence
// when stderr is not a terminal, and a line redrawn in place when it is (a pseudo-terminal).
#include "base/progress_line.hpp"

#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

TEST(ProgressLine, TextByHand) {
  EXPECT_EQ(ProgressLine::format("replay", 0, 40, 0.0), "replay:   0% 0/40 units, elapsed 0s, ETA ?");
  // 10 of 40 in 3 s: 30 left at 0.3 s each = 9 s.
  EXPECT_EQ(ProgressLine::format("replay", 10, 40, 3.0), "replay:  25% 10/40 units, elapsed 3s, ETA 9s");
  EXPECT_EQ(ProgressLine::format("tune", 40, 40, 75.0), "tune: 100% 40/40 units, elapsed 1m15s, ETA 0s");
  EXPECT_EQ(ProgressLine::format("x", 5, 0, 1.0), "x: 100% 5/0 units, elapsed 1s, ETA 0s");
}

// Not a terminal (a pipe, as in every other CLI test): nothing is printed, whatever the work.
TEST(ProgressLine, SilentWhenStderrIsNotATerminal) {
  const std::string sweep = temp_dir() + "/s.csv";
  ASSERT_EQ(
      run_cli("synth --fabric h100-ib-a --nodes 4 --collectives allreduce --out '" + sweep + "'").exit_code,
      0);
  const CliResult r =
      run_cli("replay --sweep '" + sweep + "' --policy 'ucb1:c=0.05|0.1|0.2' --seeds 4 --horizon 20000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("units, elapsed"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

// On a terminal a replay that runs for a while redraws "replay: ...% k/N units" in place and ends
// the line when done (N = 3 configs x the sweep's contexts).
TEST(ProgressLine, RedrawnInPlaceOnATerminal) {
  const std::string sweep = temp_dir() + "/s.csv";
  ASSERT_EQ(
      run_cli("synth --fabric h100-ib-a --nodes 4 --collectives allreduce --out '" + sweep + "'").exit_code,
      0);
  const CliResult inspect = run_cli("inspect '" + sweep + "' --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  const std::string units = std::to_string(3 * nlohmann::json::parse(inspect.out)["contexts"].get<int>());
  int fd = -1;
  const pid_t pid = forkpty(&fd, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(NCCLBOT_BINARY, NCCLBOT_BINARY, "replay", "--sweep", sweep.c_str(), "--policy",
          "ucb1:c=0.05|0.1|0.2", "--seeds", "8", "--horizon", "40000", "--threads", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string seen;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    seen.append(buf, size_t(n));  // EIO once the child is gone
  int status = 0;
  waitpid(pid, &status, 0);
  close(fd);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << seen;
  EXPECT_NE(seen.find("\rreplay: "), std::string::npos) << seen;
  EXPECT_NE(seen.find("/" + units + " units, elapsed"), std::string::npos) << seen;
  EXPECT_NE(seen.find(" " + units + "/" + units + " units"), std::string::npos)
      << seen;                                                     // the last: all done
  EXPECT_NE(seen.find("online mean"), std::string::npos) << seen;  // and the report follows
}

// An installed observer (the Python module's) gets what the line would show, whatever stderr is:
// nothing for work that ends within 200 ms, then at most one report per 200 ms, and a last one
// with everything done. A disabled line (a non-zero MPI rank) tells it nothing.
TEST(ProgressLine, AnObserverReceivesTheReportsInsteadOfTheTerminal) {
  struct Report {
    std::string label;
    size_t done, total;
    bool last;
  };
  std::vector<Report> seen;
  set_progress_observer([&](const std::string& label, size_t done, size_t total, bool last) {
    seen.push_back({label, done, total, last});
  });
  {
    ProgressLine quick("quick", 10);
    quick.units_done(10);
  }
  EXPECT_TRUE(seen.empty());
  {
    ProgressLine slow("slow", 4);
    slow.units_done(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    slow.units_done(1);  // drawn: 250 ms since the start
    slow.units_done(1);  // not drawn: within 200 ms of the last
    ProgressLine off("off", 4, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    off.units_done(4);
    slow.units_done(1);
  }
  set_progress_observer({});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].label, "slow");
  EXPECT_EQ(seen[0].done, 2u);
  EXPECT_FALSE(seen[0].last);
  EXPECT_EQ(seen[1].done, 4u);
  EXPECT_FALSE(seen[1].last);
  EXPECT_EQ(seen[2].done, 4u);
  EXPECT_EQ(seen[2].total, 4u);
  EXPECT_TRUE(seen[2].last);
}
