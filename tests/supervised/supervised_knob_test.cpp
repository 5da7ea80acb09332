// kNN and the decision tree on a knob sweep: labels are arms (algorithm, protocol, channels, chunk)
// matched by identity, predictions are indices of the query context's arms in Arm order. The sweep
// is written by hand: all-reduce on 2 nodes at 1, 2, 4 and 8 KiB with the arms Ring/LL at NCCL's
// channels, Ring/LL at 4 channels and Ring/Simple (indices 0, 1, 2 in Arm order); Ring/LL at 4
// channels is fastest at 1 and 2 KiB, Ring/Simple at 4 and 8 KiB. A 16 KiB context lacks Ring/LL
// at 4 channels.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/supervised/supervised.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;

namespace {

Sweep knob_threshold_sweep() {
  const std::string path = test::temp_dir() + "/knob.csv";
  std::ofstream out(path);
  out << "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us\n";
  for (uint64_t kib : {1, 2, 4, 8, 16}) {
    const bool small = kib <= 2;
    const std::string row = "h,AllReduce,2,8," + std::to_string(kib * 1024) + ",Ring,";
    out << row << "LL,0,0,0,30\n";
    if (kib != 16) out << row << "LL,4,0,0," << (small ? 10 : 20) << "\n";
    out << row << "Simple,0,0,0," << (small ? 20 : 10) << "\n";
  }
  out.close();
  return read_sweep_csv(path);
}

}  // namespace

TEST(SupervisedKnobs, KnnVotesForArmsByIdentity) {
  const Sweep s = knob_threshold_sweep();
  ASSERT_FALSE(s.slot_shaped());
  // Leave-one-out with k = 1 over the four smaller contexts: 1 KiB's nearest is 2 KiB (Ring/LL at 4
  // channels, index 1); 2 KiB's nearest are 1 and 4 KiB at the same distance, the first in training
  // order wins (index 1); 4 KiB's are 2 and 8 KiB, again the first (index 1); 8 KiB's nearest is
  // 4 KiB (Ring/Simple, index 2). 16 KiB (not trained) follows 8 KiB: Ring/Simple, its index 1.
  const PolicyConfig cfg = parse_policy_spec("knn:k=1").config;
  const std::vector<int> d = supervised_decisions(cfg, s, {0, 1, 2, 3}, true);
  EXPECT_EQ(d, (std::vector<int>{1, 1, 1, 2, 1}));
  // A neighbour whose best arm the query lacks does not vote: 16 KiB trained on 1 and 2 KiB only
  // has no valid vote.
  KnnSelector knn;
  knn.fit(s, {0, 1}, 1);
  EXPECT_EQ(knn.predict(s, 4), -1);
}

TEST(SupervisedKnobs, TheTreeSplitsOnSizeAndPredictsTheQuerysIndex) {
  const Sweep s = knob_threshold_sweep();
  // Trained on the four smaller contexts: one split on log2 bytes between 2 and 4 KiB (11.5), pure
  // leaves; 1 KiB predicts Ring/LL at 4 channels (index 1), 8 and 16 KiB Ring/Simple (2 and 1).
  TreeSelector tree;
  tree.fit(s, {0, 1, 2, 3}, 3);
  EXPECT_EQ(tree.leaves(), 2);
  EXPECT_EQ(tree.predict(s, 0), 1);
  EXPECT_EQ(tree.predict(s, 3), 2);
  EXPECT_EQ(tree.predict(s, 4), 1);
}

TEST(SupervisedKnobs, ReplayRunsThemOnAKnobSweep) {
  const std::string path = test::temp_dir() + "/k.csv";
  {
    std::ofstream out(path);
    out << "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us\n";
    for (uint64_t kib : {1, 2, 4, 8})
      for (const char* arm : {"LL,0,0", "LL,4,0", "Simple,0,0"})
        out << "h,AllReduce,2,8," << kib * 1024 << ",Ring," << arm << ",0,10\n";
  }
  const test::CliResult r = test::run_cli("replay --sweep '" + path +
                                          "' --policy knn:k=1 --policy tree:depth=2 --seeds 1 --horizon 5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}
