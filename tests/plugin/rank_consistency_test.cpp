// Rank consistency: several processes on loopback, each loading the plugin as NCCL does and
// playing the same sequence of collectives of one communicator, each measuring its own noisy
// latencies. With the leader (NCCLBOT_LEADER) they must never disagree over 10^5 calls; the naive
// rank-local learner (NCCLBOT_AGREEMENT=local) fed the same way does disagree, which is why the
// leader exists.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <random>
#include <thread>

#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/plugin_loader.hpp"
#include "plugin/standin_nccl.hpp"
#include "plugin/unit/log_records.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;
using ncclbot::plugin::free_loopback_port;

namespace {

constexpr int kCalls = 100000;
constexpr uint64_t kCommId = 0xabcdef12345ull;
constexpr const char* kSecret = "rank-consistency-test-secret";
// The message sizes each rank's calls cycle through, one context each.
constexpr size_t kSizes[3] = {size_t(1) << 16, size_t(1) << 18, size_t(1) << 20};

// Arms of the test communicator, with true latencies close enough that per-rank noise reorders
// their sample means: Tree/LL 10 us, Tree/Simple 10.4 us, Ring/LL128 10.8 us, Ring/Simple 11.5 us.
// NCCL's cost table (the prior) prefers Ring/Simple.
void fill_table(CostTable7x3& t) {
  t.t[0][0] = 14.0f;
  t.t[0][2] = 13.0f;
  t.t[1][1] = 12.0f;
  t.t[1][2] = 11.0f;
}
double true_latency(int slot) {
  switch (slot) {
    case 0:
      return 10.0;
    case 2:
      return 10.4;
    case 4:
      return 10.8;
    default:
      return 11.5;
  }
}

// rank_main's body for a rank that is the stand-in NCCL: the same calls, each one collective of the
// stand-in (CollApi event, getCollInfo, Coll event, kernel channels timing this rank's noisy latency
// when the activation mask the call loaded held KernelCh).
[[noreturn]] void profiler_rank_main(int rank, int nranks, int ready_fd, int go_fd, int done_fd, int exit_fd,
                                     const std::string& out) {
  std::string picks(kCalls, '\0');
  char byte = 1;
  {
    StandInNccl comm(kNccl231, kCommId, nranks, 1);
    if (write(ready_fd, &byte, 1) != 1 || read(go_fd, &byte, 1) != 1) _exit(4);
    std::mt19937_64 noise(1000 + uint64_t(rank));
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    for (int i = 0; i < kCalls; ++i) {
      CostTable7x3 t;
      fill_table(t);
      comm.group({{4, kSizes[i % 3]}}, t, false,
                 [&](size_t, int slot) { return true_latency(slot) * jitter(noise); });
      picks[size_t(i)] = char(comm.picks().back());
    }
    if (comm.failures() != 0) _exit(6);
    write_file(out, picks);
    if (write(done_fd, &byte, 1) != 1 || read(exit_fd, &byte, 1) != 1) _exit(5);
  }
  std::string lines;
  for (const auto& l : log_lines()) lines += l.text + "\n";
  write_file(out + ".messages", lines);
  _exit(0);
}

// One rank: init, wait for every rank (NCCL's communicator init is collective), then kCalls calls
// over three message sizes, reporting this rank's own noisy latency after each; writes the picked
// slots to `out`.
// A real job keeps every rank alive until the collectives of all ranks are done (they synchronise
// on the GPU), so the leader cannot exit while followers still ask; `done_fd` / `exit_fd` model that.
// `profiler`: the rank is the stand-in NCCL 2.31 (plugin/standin_nccl.hpp), whose profiler delivers
// the latencies (the kernel channels' timers), not the report function; its messages are kept.
[[noreturn]] void rank_main(int rank, int nranks, bool leader, int port, const std::string& policy,
                            int ready_fd, int go_fd, int done_fd, int exit_fd, const std::string& out,
                            int lost_rank, int wrong_secret_rank, const std::string& log, bool profiler) {
  setenv("NCCLBOT_MODE", "online", 1);
  if (!log.empty()) setenv("NCCLBOT_LOG", log.c_str(), 1);  // every rank is told; rank 0 logs
  setenv("NCCLBOT_POLICY", policy.c_str(), 1);
  setenv("NCCLBOT_SEED", "7", 1);
  setenv("NCCLBOT_RANK", std::to_string(rank).c_str(), 1);
  setenv("NCCLBOT_LEADER_TIMEOUT_MS", "20000", 1);
  setenv("NCCLBOT_LEADER_SECRET", rank == wrong_secret_rank ? "another-jobs-secret-0000" : kSecret, 1);
  if (leader && rank == lost_rank) {  // this rank is given a wrong address: it never reaches the leader
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(port == 65535 ? 1 : port + 1)).c_str(), 1);
    setenv("NCCLBOT_LEADER_TIMEOUT_MS", "300", 1);
  } else if (leader) {
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
  } else {
    setenv("NCCLBOT_AGREEMENT", "local", 1);
  }
  if (profiler) profiler_rank_main(rank, nranks, ready_fd, go_fd, done_fd, exit_fd, out);
  Plugin p;
  if (!p.ok()) _exit(3);
  void* tuner = nullptr;
  // A logging rank records its plugin's messages, which the test reads for the count of dropped records.
  p.v5->init(&tuner, kCommId, size_t(nranks), 1, log.empty() ? nullptr : recording_logger, nullptr, nullptr);
  char byte = 1;
  if (write(ready_fd, &byte, 1) != 1 || read(go_fd, &byte, 1) != 1) _exit(4);
  std::mt19937_64 noise(1000 + uint64_t(rank));  // rank-local measurement noise
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  std::string picks(kCalls, '\0');
  for (int i = 0; i < kCalls; ++i) {
    const size_t bytes = kSizes[i % 3];
    CostTable7x3 t;
    fill_table(t);
    p.v5->getCollInfo(tuner, 4, bytes, 1, t.ptr(), 7, 3, 0, nullptr);
    const int slot = t.pick();
    picks[size_t(i)] = char(slot);
    p.report(kCommId, nranks, 1, 4, bytes, slot / 3, slot % 3, true_latency(slot) * jitter(noise));
  }
  write_file(out, picks);
  if (write(done_fd, &byte, 1) != 1 || read(exit_fd, &byte, 1) != 1) _exit(5);
  p.v5->finalize(tuner);
  if (!log.empty()) {
    std::string lines;
    for (const auto& l : log_lines()) lines += l.text + "\n";
    write_file(out + ".messages", lines);
  }
  _exit(0);
}

struct RankRun {
  std::vector<std::string> picks;
  std::vector<std::string> messages;  // the plugin's messages, from ranks that log
  bool ok = true;
};

RankRun run_ranks(int nranks, bool leader, const std::string& policy, int lost_rank = -1,
                  int wrong_secret_rank = -1, const std::string& log = "", bool profiler = false) {
  const int port = free_loopback_port();
  const std::string dir = temp_dir();
  int ready[2], go[2], done[2], quit[2];
  EXPECT_EQ(pipe(ready), 0);
  EXPECT_EQ(pipe(go), 0);
  EXPECT_EQ(pipe(done), 0);
  EXPECT_EQ(pipe(quit), 0);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0)
      rank_main(r, nranks, leader, port, policy, ready[1], go[0], done[1], quit[0],
                dir + "/rank" + std::to_string(r), lost_rank, wrong_secret_rank, log, profiler);
    pids.push_back(pid);
  }
  char byte;
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(read(ready[0], &byte, 1), 1);
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(write(go[1], &byte, 1), 1);
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(read(done[0], &byte, 1), 1);
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(write(quit[1], &byte, 1), 1);
  RankRun run;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) run.ok = false;
  }
  for (int r = 0; r < nranks; ++r) {
    run.picks.push_back(read_all(dir + "/rank" + std::to_string(r)));
    run.messages.push_back(read_all(dir + "/rank" + std::to_string(r) + ".messages"));
  }
  for (int fd : {ready[0], ready[1], go[0], go[1], done[0], done[1], quit[0], quit[1]}) close(fd);
  return run;
}

int disagreements(const RankRun& run) {
  int n = 0;
  for (size_t r = 1; r < run.picks.size(); ++r)
    for (size_t i = 0; i < run.picks[0].size() && i < run.picks[r].size(); ++i)
      n += run.picks[r][i] != run.picks[0][i];
  return n;
}

int distinct_arms(const std::string& picks) {
  bool seen[21] = {};
  int n = 0;
  for (char c : picks)
    if (c >= 0 && c < 21 && !seen[int(c)]) seen[int(c)] = true, ++n;
  return n;
}

// Every rank played NCCL's pick (Ring/Simple, the prior's argmin) on every call.
void expect_everyone_on_nccls_choice(const RankRun& run) {
  ASSERT_TRUE(run.ok);
  EXPECT_EQ(disagreements(run), 0);
  for (const auto& p : run.picks) {
    ASSERT_EQ(p.size(), size_t(kCalls));
    EXPECT_EQ(distinct_arms(p), 1);
    EXPECT_EQ(int(p[0]), 1 * 3 + 2);
  }
}

// Whether fd has something to read (or its writers are gone) within ms milliseconds.
bool readable_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1;
}

}  // namespace

TEST(RankConsistency, LeaderKeepsFourRanksInAgreementOverOneHundredThousandCalls) {
  for (const std::string policy : {"egreedy:eps=0.2,n0=1", "ucb1:c=0.2,n0=2"}) {
    const RankRun run = run_ranks(4, true, policy);
    ASSERT_TRUE(run.ok) << policy;
    for (const auto& p : run.picks) ASSERT_EQ(p.size(), size_t(kCalls)) << policy;
    EXPECT_EQ(disagreements(run), 0) << policy;
    // The policy really decided (it explored several arms), rather than everyone passing through.
    EXPECT_GE(distinct_arms(run.picks[0]), 3) << policy;
  }
}

// A watch rule (`@watch`, docs/plugin.md "The cost of watching") through the profiler: the leader's
// process switches KernelCh by its rule, a follower's (whose latencies nobody reads) watches only its
// first calls, and every rank still plays the same arm on every call, since all play the leader's
// memo.
TEST(RankConsistency, WatchingFewerCallsThroughTheProfilerKeepsThreeRanksInAgreement) {
  const RankRun run = run_ranks(3, true, "ucb1:c=0.2,n0=2@watch", -1, -1, "", true);
  ASSERT_TRUE(run.ok);
  for (const auto& p : run.picks) ASSERT_EQ(p.size(), size_t(kCalls));
  EXPECT_EQ(disagreements(run), 0);
  EXPECT_GE(distinct_arms(run.picks[0]), 3);
  // How many calls each rank's profiler saw run unwatched (its "profiler watching" line).
  const auto unwatched = [](const std::string& messages) {
    const std::string head = "collectives run unwatched";
    const size_t at = messages.find(head);
    if (at == std::string::npos) return -1L;
    size_t begin = messages.rfind(", ", at);
    return std::stol(messages.substr(begin + 2, at - begin - 2));
  };
  for (int r = 0; r < 3; ++r) EXPECT_GT(unwatched(run.messages[size_t(r)]), long(kCalls / 2)) << "rank " << r;
}

// The number N in the plugin's "N records dropped" warning among `messages`, 0 when there is none.
long dropped_records(const std::string& messages) {
  const std::string tail = " records dropped";
  const size_t at = messages.find(tail);
  if (at == std::string::npos) return 0;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(messages[begin - 1]))) --begin;
  return std::stol(messages.substr(begin, at - begin));
}

// In leader mode the leader's rank logs its calls (NCCLBOT_LOG, docs/ope.md): one record per call,
// in call order, with the arm every rank played, NCCL's pick and a probability in (0, 1] that is
// not always 1 (ε-greedy explores); the followers write nothing. The calls come far faster than any
// job's (10^5 in about 0.2 s), so on a loaded machine the writer may fall behind and drop records:
// every call is then either logged, at its own index, or counted in the plugin's warning.
TEST(RankConsistency, TheLeaderLogsItsRanksDecisionsWithTheirProbabilities) {
  const std::string dir = temp_dir();
  const std::string log = dir + "/decisions.%r.log";
  const RankRun run = run_ranks(3, true, "egreedy:eps=0.2,decay=0,n0=1", -1, -1, log);
  ASSERT_TRUE(run.ok);
  ASSERT_EQ(disagreements(run), 0);
  const auto calls = ncclbot::plugin::test::call_records(dir + "/decisions.0.log");
  const long dropped = dropped_records(run.messages[0]);
  RecordProperty("dropped", std::to_string(dropped));
  ASSERT_EQ(long(calls.size()) + dropped, long(kCalls));
  ASSERT_GE(calls.size(), size_t(kCalls / 10));  // a writer that kept up with a tenth of the calls
  int explored = 0;
  long previous = -1;
  for (const auto& r : calls) {
    const long context = std::find(kSizes, kSizes + 3, r.bytes) - kSizes;
    ASSERT_LT(context, 3) << r.bytes;
    const long i = 3 * long(r.call_index) + context;  // the rank's call number (sizes cycle)
    ASSERT_GT(i, previous);
    ASSERT_LT(i, long(kCalls));
    previous = i;
    ASSERT_EQ(r.slot, int(run.picks[0][size_t(i)])) << i;
    ASSERT_EQ(r.nccl_slot, 1 * 3 + 2) << i;
    ASSERT_TRUE(r.propensity > 0.0 && r.propensity <= 1.0) << i << " " << r.propensity;
    explored += r.propensity < 0.5;
  }
  EXPECT_GT(explored, int(calls.size()) / 100);
  for (const char* follower : {"1.log", "2.log"})
    EXPECT_NE(access((dir + "/decisions." + follower).c_str(), F_OK), 0) << follower;
}

// A leader process that holds two ranks of one communicator cannot tell whose latency its profiler
// reports, so the second rank's init ends that communicator's log (with a warning): the calls made
// before it are logged, none after it.
TEST(RankConsistency, ASecondRankInTheLeadersProcessEndsItsLog) {
  const std::string log = temp_dir() + "/two-ranks.log";
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("NCCLBOT_MODE", "online", 1);
    setenv("NCCLBOT_POLICY", "egreedy:eps=0.2,decay=0,n0=1", 1);
    setenv("NCCLBOT_RANK", "0", 1);
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(free_loopback_port())).c_str(), 1);
    setenv("NCCLBOT_LEADER_SECRET", kSecret, 1);
    setenv("NCCLBOT_LOG", log.c_str(), 1);
    Plugin p;
    if (!p.ok()) _exit(3);
    const auto play = [&](void* tuner, int calls) {
      for (int i = 0; i < calls; ++i) {
        CostTable7x3 t;
        fill_table(t);
        p.v5->getCollInfo(tuner, 4, size_t(1) << 16, 1, t.ptr(), 7, 3, 0, nullptr);
        const int slot = t.pick();
        p.report(kCommId, 2, 1, 4, size_t(1) << 16, slot / 3, slot % 3, true_latency(slot));
      }
    };
    void* first = nullptr;
    void* second = nullptr;
    p.v5->init(&first, kCommId, 2, 1, recording_logger, nullptr, nullptr);
    play(first, 40);
    p.v5->init(&second, kCommId, 2, 1, recording_logger, nullptr, nullptr);
    play(first, 40);
    play(second, 40);
    p.v5->finalize(second);
    p.v5->finalize(first);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(ncclbot::plugin::test::call_records(log).size(), 40u);
}

// Over knob arms the leader credits a latency with the chunk its own call was handed, which a
// process holding two ranks of one communicator cannot tell apart: the second rank's init says, in
// one warning, that the leader learns nothing over knob arms from then on.
TEST(RankConsistency, ASecondRankInTheKnobLeadersProcessIsSaidToStopItsLearning) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("NCCLBOT_MODE", "online", 1);
    setenv("NCCLBOT_POLICY", "ucb1", 1);
    setenv("NCCLBOT_KNOBS", "channels=0,8", 1);
    setenv("NCCLBOT_RANK", "0", 1);
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(free_loopback_port())).c_str(), 1);
    setenv("NCCLBOT_LEADER_SECRET", kSecret, 1);
    Plugin p;
    if (!p.ok()) _exit(3);
    clear_log();
    void* first = nullptr;
    void* second = nullptr;
    p.v5->init(&first, kCommId, 2, 1, recording_logger, nullptr, nullptr);
    const bool before = logged(kNcclLogWarn, "learns nothing over knob arms");
    p.v5->init(&second, kCommId, 2, 1, recording_logger, nullptr, nullptr);
    const bool after = logged(kNcclLogWarn, "learns nothing over knob arms") &&
                       logged(kNcclLogInfo, "online (leader over knob arms)");
    p.v5->finalize(second);
    p.v5->finalize(first);
    _exit(!before && after ? 0 : 4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RankConsistency, NaiveRankLocalLearnerDisagrees) {
  const RankRun run = run_ranks(4, false, "egreedy:eps=0.2,n0=1");
  ASSERT_TRUE(run.ok);
  // Same seed and same exploration draws, but each rank's means come from its own noise: the
  // greedy steps part ways. Any single disagreement would hang a real job.
  const int n = disagreements(run);
  EXPECT_GT(n, 0);
  RecordProperty("disagreements", n);
  std::printf("rank-local learners: %d disagreeing (rank, call) pairs out of %d\n", n, 3 * kCalls);
}

TEST(RankConsistency, ARankThatNeverReachesTheLeaderLeavesEveryoneOnNcclsChoice) {
  // Rank 2 cannot connect, so it never announces itself; the leader waits for all three ranks
  // before deciding anything, so every rank keeps NCCL's pick (Ring/Simple, the prior's argmin).
  expect_everyone_on_nccls_choice(run_ranks(3, true, "egreedy:eps=0.5,n0=1", 2));
}

TEST(RankConsistency, ARankWithAnotherSecretIsRefusedAndEveryoneStaysOnNcclsChoice) {
  // Rank 1 reaches the leader but holds another job's secret: the leader's WELCOME fails its check,
  // so rank 1 never sends a HELLO (the leader could not have counted one anyway, nor signed a
  // refusal for it) and passes through, and the leader, still missing a rank, keeps NCCL's pick too.
  expect_everyone_on_nccls_choice(run_ranks(3, true, "egreedy:eps=0.5,n0=1", -1, 1));
}

TEST(RankConsistency, AFollowerOfACrashedLeaderPassesThroughInsteadOfHanging) {
  // Rank 0 dies (no finalize, as in a crash) after both ranks played the same first calls. The
  // follower's later calls must not hang inside getCollInfo: once reconnecting is refused for a
  // whole NCCLBOT_LEADER_TIMEOUT_MS (nobody listens on the leader's port), it plays NCCL's choice,
  // with one WARN. Until then it plays exactly the leader's decisions.
  // The leader never waits for a follower, so the ranks start together after both inits (NCCL's
  // init is collective). The leader starts a context only once the follower's first request has
  // brought its cost table; on a loaded machine the follower may be descheduled while the leader
  // plays all its calls, so the leader pauses after its first call until the follower has played
  // its own (`started`) and the policy decides from call kLeaderStart on.
  constexpr int kBefore = 30000, kAfter = 3000;
  const int port = free_loopback_port();
  const std::string dir = temp_dir();
  // `gone`: only the leader keeps the write end, so the follower's read returns 0 once the leader's
  // process has really exited. Without it a loaded machine may keep the leader serving windows
  // for hundreds of calls after `halfway`, and the follower would rightly play them.
  int listening[2], joined[2], started[2], halfway[2], gone[2];
  ASSERT_EQ(pipe(listening), 0);
  ASSERT_EQ(pipe(joined), 0);
  ASSERT_EQ(pipe(started), 0);
  ASSERT_EQ(pipe(halfway), 0);
  ASSERT_EQ(pipe(gone), 0);
  auto start_rank = [&](int rank) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    setenv("NCCLBOT_MODE", "online", 1);
    setenv("NCCLBOT_POLICY", "egreedy:eps=0.5,n0=1", 1);
    setenv("NCCLBOT_SEED", "7", 1);
    setenv("NCCLBOT_RANK", std::to_string(rank).c_str(), 1);
    setenv("NCCLBOT_LEADER", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("NCCLBOT_LEADER_SECRET", kSecret, 1);
    setenv("NCCLBOT_LEADER_TIMEOUT_MS", "500", 1);
    char byte = 1;
    if (rank == 1) close(gone[1]);
    if (rank == 1 && read(listening[0], &byte, 1) != 1) _exit(4);  // the leader's init came first
    Plugin p;
    if (!p.ok()) _exit(3);
    void* tuner = nullptr;
    p.v5->init(&tuner, kCommId, 2, 1, recording_logger, nullptr, nullptr);
    if (rank == 0 && (write(listening[1], &byte, 1) != 1 || read(joined[0], &byte, 1) != 1)) _exit(4);
    if (rank == 1 && write(joined[1], &byte, 1) != 1) _exit(4);
    std::string picks;
    for (int i = 0; i < (rank == 0 ? kBefore : kBefore + kAfter); ++i) {
      if (rank == 0 && i == 1 && !readable_within(started[0], 60000)) _exit(5);
      if (rank == 0 && i == 1 && read(started[0], &byte, 1) != 1) _exit(4);
      if (rank == 1 && i == 1 && write(started[1], &byte, 1) != 1) _exit(4);
      if (rank == 1 && i == kBefore) {
        if (write(halfway[1], &byte, 1) != 1) _exit(4);
        if (read(gone[0], &byte, 1) != 0) _exit(4);  // EOF: the leader's process is gone
      }
      CostTable7x3 t;
      fill_table(t);
      p.v5->getCollInfo(tuner, 4, size_t(1) << 16, 1, t.ptr(), 7, 3, 0, nullptr);
      const int slot = t.pick();
      picks += char(slot);
      if (rank == 0) p.report(kCommId, 2, 1, 4, size_t(1) << 16, slot / 3, slot % 3, true_latency(slot));
    }
    if (rank == 1) picks += logged(kNcclLogWarn, "its process is gone") ? 'W' : '-';
    write_file(dir + "/rank" + std::to_string(rank), picks);
    if (rank == 0) {
      if (read(halfway[0], &byte, 1) != 1) _exit(4);  // the follower has played the first kBefore calls
      _exit(0);                                       // gone, its listening socket with it
    }
    p.v5->finalize(tuner);
    _exit(0);
  };
  const pid_t leader = start_rank(0), follower = start_rank(1);
  close(gone[1]);
  int status = 0;
  ASSERT_EQ(waitpid(leader, &status, 0), leader);
  const bool leader_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  // The follower must finish on its own; a hang is killed and fails the test.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t done = 0;
  while ((done = waitpid(follower, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(follower, SIGKILL);
    waitpid(follower, &status, 0);
    FAIL() << "the follower of a crashed leader hangs";
  }
  ASSERT_TRUE(leader_ok) << "the leader failed (exit 5: the follower's first call did not come within 60 s)";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {listening[0], listening[1], joined[0], joined[1], started[0], started[1], halfway[0],
                 halfway[1], gone[0]})
    close(fd);
  const std::string lead = read_all(dir + "/rank0"), follow = read_all(dir + "/rank1");
  ASSERT_EQ(lead.size(), size_t(kBefore));
  ASSERT_EQ(follow.size(), size_t(kBefore + kAfter + 1));
  EXPECT_EQ(follow.back(), 'W');  // said so
  EXPECT_EQ(follow.substr(0, kBefore), lead);
  EXPECT_GE(distinct_arms(lead), 3);  // the policy really decided
  // Windows fetched before the crash are still played (by call kBefore - 1 the follower has asked for
  // every window up to the one holding call kBefore - 1 + kLeaderPrefetch); everything after is
  // NCCL's pick.
  for (int i = kBefore + ncclbot::kLeaderPrefetch + ncclbot::kLeaderWindow; i < kBefore + kAfter; ++i)
    ASSERT_EQ(int(follow[size_t(i)]), 1 * 3 + 2) << i;
}
