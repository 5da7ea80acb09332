// The state file cannot hurt: field-by-field format with every value checked on load, and a save
// that replaces only ncclbot's own regular file, merges with concurrent jobs, and never follows a
// symlink or writes into a device.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "ncclbot/core/knob_spec.hpp"
#include "plugin/decision_table_file.hpp"
#include "plugin/state_file.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;
namespace {

std::string temp_dir() {
  std::string tmpl = "/tmp/ncclbot-state-unit-XXXXXX";
  return mkdtemp(tmpl.data()) ? tmpl : std::string("/tmp");
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::shared_ptr<const PolicyEngine> state_file_engine(const char* spec) {
  std::string error;
  auto e = PolicyEngine::create(spec, 3, &error);
  EXPECT_TRUE(e) << error;
  return e;
}

// One context with Tree/LL (slot 0, 10 us) and Ring/Simple (slot 5, 20 us), `plays` observations.
StateEntry entry(const PolicyEngine& eng, uint32_t key, int plays) {
  StateEntry e;
  e.nranks = 8;
  e.nnodes = 2;
  e.key = key;
  for (float& p : e.prior) p = -1.0f;
  e.prior[0] = 10.0f;
  e.prior[5] = 20.0f;
  e.mask = (1u << 0) | (1u << 5);
  e.steps = uint64_t(plays);
  e.bytes = 4096;
  eng.reset(e.policy, ArmMask{e.mask}, e.prior);
  for (int i = 0; i < plays; ++i) {
    const int slot = eng.select(e.policy, 77, uint64_t(i));
    eng.update(e.policy, slot, slot == 0 ? 12.0 + i % 3 : 9.0 + i % 2);
  }
  return e;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Overwrites 8 bytes at `at` and fixes the checksum, so only the field check can refuse it.
std::string patched(std::string bytes, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + size_t(i)] = char(uint8_t(value >> (8 * i)));
  const uint64_t sum = fnv1a64(bytes.data(), bytes.size() - 8);
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + size_t(i)] = char(uint8_t(sum >> (8 * i)));
  return bytes;
}

// Offsets (format 3 over slot arms, state_file.hpp): header 36 bytes (magic 8, version, reserved,
// fingerprint 8, kind, arms 0, entry count); entry fixed part 4*4 + 8 + 8 + 21*4 + 4 + 4
// = 124 bytes; then the values.
constexpr size_t kFirstEntry = 36;
constexpr size_t kFirstValue = 36 + 124;

}  // namespace

TEST(StateFileFormat, EveryLivePolicyRoundTripsBitForBit) {
  for (const char* spec :
       {"auto", "random", "greedy:n0=1", "egreedy:eps=0.2,n0=1", "ucb1:c=0.5,n0=8", "thompson:n0=1,sigma=0.1",
        "etc:m=2", "swucb:c=0.3,window=20,n0=2", "ducb:c=0.3,gamma=0.9,n0=2"}) {
    auto eng = state_file_engine(spec);
    StateFile a(*eng);
    a.put(entry(*eng, 4 * 65 + 13, 50));
    a.put(entry(*eng, 4 * 65 + 14, 3));
    const std::string bytes = a.encode();
    StateFile b(*eng);
    std::string why;
    ASSERT_TRUE(b.decode(bytes, &why)) << spec << ": " << why;
    ASSERT_EQ(b.entries().size(), 2u);
    EXPECT_EQ(b.encode(), bytes) << spec;
    // The restored policy decides as the original does.
    PolicyState x = a.entries()[0].policy, y = b.entries()[0].policy;
    for (uint64_t t = 50; t < 80; ++t) {
      const int sx = eng->select(x, 77, t), sy = eng->select(y, 77, t);
      ASSERT_EQ(sx, sy) << spec << " step " << t;
      eng->update(x, sx, 11.0);
      eng->update(y, sy, 11.0);
    }
  }
}

// Which arms still hold only their prior (ArmStats::prior_only, what blind bets are made of) is not
// a field of the file: a load rebuilds it from the counts. One play: slot 0 (prior 10 us, the
// smaller, unless a randomised policy explored) observed, the other arm still at its prior.
TEST(StateFileFormat, TheArmsStillAtTheirPriorSurviveARoundTrip) {
  for (const char* spec :
       {"greedy:n0=1", "egreedy:eps=0.2,n0=1", "ucb1:c=0.5,n0=8", "thompson:n0=1,sigma=0.1",
        "swucb:c=0.3,window=20,n0=2", "ducb:c=0.3,gamma=0.9,n0=2"}) {
    auto eng = state_file_engine(spec);
    StateFile a(*eng);
    a.put(entry(*eng, 4 * 65 + 13, 1));
    StateFile b(*eng);
    std::string why;
    ASSERT_TRUE(b.decode(a.encode(), &why)) << spec << ": " << why;
    PolicyState x = a.entries()[0].policy, y = b.entries()[0].policy;
    const auto prior_only = [](PolicyState& p) {
      return with_policy(p, [](auto& q) -> uint32_t {
        if constexpr (requires { q.stats.prior_only; })
          return q.stats.prior_only.words[0];
        else
          return 0xffffffffu;
      });
    };
    // The one play (a randomised policy may explore slot 5): the other arm is still at its prior.
    PolicyState fresh = x;
    eng->reset(fresh, ArmMask{a.entries()[0].mask}, a.entries()[0].prior);
    const uint32_t expected = eng->select(fresh, 77, 0) == 0 ? 2u : 1u;  // packed arm 1 is slot 5
    EXPECT_EQ(prior_only(x), expected) << spec;
    EXPECT_EQ(prior_only(y), expected) << spec;
  }
}

TEST(StateFileFormat, OutOfRangeFieldsAndValuesAreRefused) {
  auto eng = state_file_engine("etc:m=2");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 10));
  const std::string good = a.encode();
  StateFile b(*eng);
  std::string why;
  ASSERT_TRUE(b.decode(good, &why)) << why;
  // etc's values: count[2], sum[2], mean[2], total, plays, committed (value 8: packed arm or -1).
  EXPECT_FALSE(b.decode(patched(good, kFirstValue + 8 * 8, 2), &why));  // committed arm 2 of 2
  EXPECT_NE(why.find("out of range"), std::string::npos) << why;
  EXPECT_FALSE(b.decode(patched(good, kFirstValue + 8 * 8, uint64_t(-2)), &why));
  EXPECT_TRUE(b.decode(patched(good, kFirstValue + 8 * 8, uint64_t(-1)), &why)) << why;
  double nan = std::nan("");
  uint64_t nan_bits;
  std::memcpy(&nan_bits, &nan, 8);
  EXPECT_FALSE(b.decode(patched(good, kFirstValue, nan_bits), &why));  // count[0] NaN
  double negative = -1.0;
  uint64_t neg_bits;
  std::memcpy(&neg_bits, &negative, 8);
  EXPECT_FALSE(b.decode(patched(good, kFirstValue, neg_bits), &why));              // count[0] < 0
  EXPECT_FALSE(b.decode(patched(good, kFirstValue + 7 * 8, uint64_t(-5)), &why));  // plays < 0
  // nranks 0, nnodes > nranks, key past the last context, a mask that the prior does not give.
  EXPECT_FALSE(b.decode(patched(good, kFirstEntry, uint64_t(2) << 32), &why));
  EXPECT_NE(why.find("rank or node"), std::string::npos) << why;
  EXPECT_FALSE(b.decode(patched(good, kFirstEntry, (uint64_t(9) << 32) | 8), &why));
  EXPECT_FALSE(b.decode(patched(good, kFirstEntry + 8, (uint64_t(0x21) << 32) | 715), &why));
  EXPECT_NE(why.find("context key"), std::string::npos) << why;
  EXPECT_FALSE(b.decode(patched(good, kFirstEntry + 8, (uint64_t(1u << 2) << 32) | 273), &why));
  EXPECT_NE(why.find("mask"), std::string::npos) << why;
}

TEST(StateFileFormat, SwUcbRingIndicesAreChecked) {
  auto eng = state_file_engine("swucb:c=0.3,window=20,n0=2");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 30));  // 30 plays > window 20: the ring is full
  const std::string good = a.encode();
  StateFile b(*eng);
  std::string why;
  ASSERT_TRUE(b.decode(good, &why)) << why;
  // Values: count[2] sum[2] mean[2] total plays | inv_sqrt_count[2] | history_us[20] |
  // history_arm[20] | head: history_arm[0] is value 8 + 2 + 20 = 30, head value 50.
  EXPECT_FALSE(b.decode(patched(good, kFirstValue + 30 * 8, 2), &why));  // arm 2 of 2
  EXPECT_TRUE(b.decode(patched(good, kFirstValue + 30 * 8, 1), &why)) << why;
  EXPECT_FALSE(b.decode(patched(good, kFirstValue + 50 * 8, 20), &why));  // head 20 of window 20
  EXPECT_TRUE(b.decode(patched(good, kFirstValue + 50 * 8, 19), &why)) << why;

  // Before the ring is full (5 plays of a window of 20) the head must be 5: any other place would
  // later evict entries never written.
  StateFile c(*eng);
  c.put(entry(*eng, 4 * 65 + 13, 5));
  const std::string young = c.encode();
  ASSERT_TRUE(b.decode(young, &why)) << why;
  // Values: 8 + 2 + 5 history_us + 5 history_arm = 20, then the head.
  EXPECT_FALSE(b.decode(patched(young, kFirstValue + 20 * 8, 10), &why));
  EXPECT_FALSE(b.decode(patched(young, kFirstValue + 20 * 8, 4), &why));
  EXPECT_TRUE(b.decode(patched(young, kFirstValue + 20 * 8, 5), &why)) << why;
}

TEST(StateFileFormat, CountsThatDoNotFitTheFileAreRefused) {
  auto eng = state_file_engine("greedy:n0=1");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 5));
  const std::string good = a.encode();
  StateFile b(*eng);
  std::string why;
  // Entry count (offset 32, with the arms field 0 at 28) 2^32 - 1.
  EXPECT_FALSE(b.decode(patched(good, 28, uint64_t(0xffffffffu) << 32), &why));
  EXPECT_NE(why.find("entry count"), std::string::npos) << why;
  // Value count (offset 36 + 116) larger than the policy reads.
  EXPECT_FALSE(b.decode(patched(good, kFirstEntry + 116, 9), &why));
  EXPECT_FALSE(b.decode(good.substr(0, good.size() - 9), &why));
  EXPECT_FALSE(b.decode(std::string("NCCLBOTS"), &why));
}

// Over knob arms (format 3 with its lists): a learned policy over the crossing of two slots with
// channels 0,4,8 x chunk 0,64K round-trips bit for bit and decides as the original does; a file of
// other lists, a slot learner's file and a knob learner's file are each other's strangers.
TEST(StateFileFormat, KnobArmsRoundTripAndOtherListsAreAnotherLearners) {
  const KnobSpec spec = parse_knob_spec("channels=0,4,8;chunk=0,64K");
  const KnobSpec other = parse_knob_spec("channels=0,8;chunk=0,64K");
  for (const char* policy : {"ucb1:c=0.5,n0=1", "osub", "thompson:n0=1,sigma=0.1", "greedy:n0=1"}) {
    auto eng = state_file_engine(policy);
    KnobStateFile a(*eng, &spec);
    const auto e = std::make_unique<KnobStateEntry>();
    e->nranks = 8;
    e->nnodes = 2;
    e->key = 4 * 65 + 13;
    for (float& p : e->prior) p = -1.0f;
    e->prior[2] = 12.0f;  // Tree/Simple
    e->prior[5] = 10.0f;  // Ring/Simple
    e->mask = (1u << 2) | (1u << 5);
    e->steps = 60;
    e->bytes = 4096;
    ASSERT_TRUE(a.fresh_policy(e->mask, e->prior, &e->policy));  // 2 slots x 3 channels x 2 chunks
    for (uint64_t t = 0; t < 60; ++t) {
      const int arm = eng->select_pending(e->policy, 77, t, PendingPullsT<kKnobReplayArms>{});
      ASSERT_GE(arm, 0);
      ASSERT_LT(arm, 12);
      eng->update(e->policy, arm, 10.0 + double((arm * 7 + t) % 5));
    }
    a.put(*e);
    const std::string bytes = a.encode();
    KnobStateFile b(*eng, &spec);
    std::string why;
    ASSERT_TRUE(b.decode(bytes, &why)) << policy << ": " << why;
    ASSERT_EQ(b.entries().size(), 1u);
    EXPECT_EQ(b.encode(), bytes) << policy;
    auto x = std::make_unique<AnyPolicyT<kKnobReplayArms>>(a.entries()[0].policy);
    auto y = std::make_unique<AnyPolicyT<kKnobReplayArms>>(b.entries()[0].policy);
    for (uint64_t t = 60; t < 90; ++t) {
      const int sx = eng->select_pending(*x, 77, t, PendingPullsT<kKnobReplayArms>{});
      ASSERT_EQ(sx, eng->select_pending(*y, 77, t, PendingPullsT<kKnobReplayArms>{})) << policy << " " << t;
      eng->update(*x, sx, 11.0);
      eng->update(*y, sx, 11.0);
    }
    KnobStateFile c(*eng, &other);
    EXPECT_FALSE(c.decode(bytes, &why)) << policy;
    EXPECT_NE(why.find("written for other NCCLBOT_KNOBS lists"), std::string::npos) << why;
    StateFile slots(*eng);
    EXPECT_FALSE(slots.decode(bytes, &why)) << policy;
    EXPECT_NE(why.find("written over knob arms"), std::string::npos) << why;
    StateFile slot_file(*eng);
    slot_file.put(entry(*eng, 4 * 65 + 13, 5));
    EXPECT_FALSE(b.decode(slot_file.encode(), &why)) << policy;
    EXPECT_NE(why.find("not knob arms"), std::string::npos) << why;
  }
}

// A format-2 file (before the arms field: version 2 at offset 8, the entry count at 28) is still
// read by a slot learner, with the same entries; a knob learner refuses it.
TEST(StateFileFormat, AFormat2FileIsStillRead) {
  auto eng = state_file_engine("ucb1:c=0.5,n0=8");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 20));
  const std::string v3 = a.encode();
  std::string v2 = v3.substr(0, 28) + v3.substr(32);  // without the arms field (0: slot arms)
  v2[8] = 2;
  v2 = patched(v2, 0, 0x53544f424c43434eull);  // the magic again, and the checksum recomputed
  StateFile b(*eng);
  std::string why;
  ASSERT_TRUE(b.decode(v2, &why)) << why;
  EXPECT_EQ(b.encode(), v3);  // written back as format 3, the same entry
  const KnobSpec spec = parse_knob_spec("channels=0,8");
  KnobStateFile k(*eng, &spec);
  EXPECT_FALSE(k.decode(v2, &why));
  EXPECT_NE(why.find("format 2 holds no knob arms"), std::string::npos) << why;
}

TEST(StateFileSafety, ASymlinkADeviceAFifoAndAUsersFileAreLeftAlone) {
  auto eng = state_file_engine("greedy:n0=1");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 5));
  const std::string dir = temp_dir();
  std::string warning;

  const std::string victim = dir + "/precious.txt";
  write_bytes(victim, "a user's notes\n");
  const std::string link = dir + "/state-link";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  EXPECT_FALSE(a.save(link, &warning));
  EXPECT_NE(warning.find("not a regular file"), std::string::npos) << warning;
  EXPECT_EQ(read_all(victim), "a user's notes\n");
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));

  EXPECT_FALSE(a.save(victim, &warning));  // a regular file, but not ncclbot's
  EXPECT_NE(warning.find("not written by ncclbot"), std::string::npos) << warning;
  EXPECT_EQ(read_all(victim), "a user's notes\n");

  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  StateFile loader(*eng);
  EXPECT_FALSE(loader.load(fifo, &warning));  // would block forever if opened for a plain read
  EXPECT_FALSE(a.save(fifo, &warning));
  EXPECT_FALSE(loader.load("/dev/zero", &warning));  // would grow without end if read
  EXPECT_NE(warning.find("not a regular file"), std::string::npos) << warning;
  EXPECT_FALSE(a.save("/dev/null", &warning));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  EXPECT_FALSE(loader.load(link, &warning));  // loading never follows a symlink either
  EXPECT_NE(warning.find("symbolic link"), std::string::npos) << warning;
}

TEST(StateFileSafety, SaveIsOwnerOnlyAtomicAndLeavesNoTemporaryFile) {
  auto eng = state_file_engine("greedy:n0=1");
  StateFile a(*eng);
  a.put(entry(*eng, 4 * 65 + 13, 5));
  const std::string dir = temp_dir();
  const std::string path = dir + "/ncclbot.state";
  std::string warning;
  ASSERT_TRUE(a.save(path, &warning)) << warning;
  ASSERT_TRUE(a.save(path, &warning)) << warning;  // replaces its own file
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  int files = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) files += e->d_name[0] != '.';
    closedir(d);
  }
  EXPECT_EQ(files, 1);
  StateFile b(*eng);
  ASSERT_TRUE(b.load(path, &warning)) << warning;
  EXPECT_EQ(b.entries().size(), 1u);
}

TEST(StateFileSafety, ConcurrentJobsMergeInsteadOfClobbering) {
  auto eng = state_file_engine("greedy:n0=1");
  const std::string path = temp_dir() + "/ncclbot.state";
  // Eight jobs, each with its own context, saving at the same moment.
  std::vector<std::thread> jobs;
  std::atomic<int> failures{0};
  for (int j = 0; j < 8; ++j)
    jobs.emplace_back([&, j] {
      StateFile f(*eng);
      f.put(entry(*eng, uint32_t(4 * 65 + 10 + j), 3 + j));
      std::string warning;
      if (!f.save(path, &warning)) ++failures;
    });
  for (auto& t : jobs) t.join();
  EXPECT_EQ(failures.load(), 0);
  StateFile merged(*eng);
  std::string warning;
  ASSERT_TRUE(merged.load(path, &warning)) << warning;
  EXPECT_EQ(merged.entries().size(), 8u);
}

TEST(StateFileSafety, AnotherPolicysFileIsReplacedButAForeignOneIsNot) {
  const std::string path = temp_dir() + "/ncclbot.state";
  auto greedy = state_file_engine("greedy:n0=1"), ucb = state_file_engine("ucb1:c=0.5,n0=8");
  StateFile g(*greedy);
  g.put(entry(*greedy, 4 * 65 + 13, 5));
  std::string warning;
  ASSERT_TRUE(g.save(path, &warning)) << warning;
  StateFile u(*ucb);
  EXPECT_FALSE(u.load(path, &warning));
  EXPECT_NE(warning.find("another policy"), std::string::npos) << warning;
  u.put(entry(*ucb, 4 * 65 + 14, 5));
  ASSERT_TRUE(u.save(path, &warning)) << warning;  // ncclbot's own file: replaced
  StateFile check(*ucb);
  ASSERT_TRUE(check.load(path, &warning)) << warning;
  EXPECT_EQ(check.entries().size(), 1u);
}

TEST(PluginFiles, ADecisionTableMustBeASmallRegularFile) {
  DecisionTable t;
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(load_decision_table("/dev/zero", "", &t, &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  const std::string big = temp_dir() + "/big.csv";
  {
    std::ofstream out(big, std::ios::binary);
    out << "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
    out << std::string(kMaxTableFileBytes, '#');
  }
  EXPECT_FALSE(load_decision_table(big, "", &t, &error));
  EXPECT_NE(error.find("larger than"), std::string::npos) << error;
}
