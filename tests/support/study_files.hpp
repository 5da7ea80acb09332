#pragma once
// The study files of tests/data/study that several tests run.
#include <string>

namespace ncclbot::test {

// The small study most study tests run.
inline const std::string kTinyStudy = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/tiny.toml";

// A study named `name` of one synthesised sweep (one node count, all-reduce) and one scenario,
// replayed for 20 calls (well under a second), with `tail` appended: its [[policy]]s, [[claim]]s.
inline std::string small_study_text(const std::string& name, const std::string& tail) {
  return "[study]\nname = \"" + name +
         "\"\nseeds = 1\nhorizon = 20\nbackend = \"cpu\"\nbootstrap_resamples = 100\n"
         "permutation_resamples = 100\nloss_vs_horizon = []\n[[sweep]]\nname = \"x\"\npreset = "
         "\"h100-ib-a\"\nnodes = [1]\ncollectives = [\"allreduce\"]\nsamples = 2\n[[scenario]]\nname = "
         "\"s\"\ntune = { sweep = \"x\" }\nscore = { sweep = \"x\" }\n" +
         tail;
}

}  // namespace ncclbot::test
