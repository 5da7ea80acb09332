// The replay kernels' per-thread stack frames, as ptxas reports them for sm_90 (docs/cuda.md
// "Per-thread state"), checked without a GPU: the build compiles kernels/replay.cu once more with
// `-Xptxas -v` into kernel-frames.txt (tests/CMakeLists.txt), and this test reads that report.
//   - no replay kernel spills a register;
//   - every undelayed replay kernel (ReplayCursor: the policy and cursor in shared memory) has a
//     frame of at most 256 bytes;
//   - a delayed one (DelayedReplayCursor) at most 256 bytes more than its cursor, which stays in
//     local memory by design (its ring of calls in flight, read and written at one position per step,
//     the same position in every lane of a warp, so local memory's interleaving coalesces it);
//   - both kernels of every policy type of the registry are in the report.
// A synthetic report checks that the check catches a large frame, a spill and a missing kernel.
#include <gtest/gtest.h>

#include <cxxabi.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/replay.hpp"

namespace {

constexpr long kFrameLimit = 256;

struct KernelUsage {
  long frame = -1, spill_stores = -1, spill_loads = -1;
};

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

// "replay_kernel<ncclbot::Ucb1PolicyT<24>, ncclbot::ReplayCursorT<0, 24> >" -> {"Ucb1PolicyT", 0},
// from the demangled name (the kernels hold kNumArms = 24 arms); {"", -1} for any other function.
std::pair<std::string, int> replay_kernel_of(const std::string& demangled) {
  static const std::regex kernel(R"(replay_kernel<ncclbot::(\w+)<24>, ncclbot::ReplayCursorT<(\d+), 24> ?>)");
  std::smatch m;
  if (!std::regex_search(demangled, m, kernel)) return {"", -1};
  return {m[1].str(), std::stoi(m[2].str())};
}

// The replay kernels of a ptxas -v report: (policy type, delay capacity) -> usage.
std::map<std::pair<std::string, int>, KernelUsage> read_report(std::istream& in) {
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex usage(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  std::map<std::pair<std::string, int>, KernelUsage> out;
  std::pair<std::string, int> current{"", -1};
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, properties)) {
      current = replay_kernel_of(demangle(m[1].str()));
    } else if (current.second >= 0 && std::regex_search(line, m, usage)) {
      out[current] = {std::stol(m[1].str()), std::stol(m[2].str()), std::stol(m[3].str())};
      current = {"", -1};
    }
  }
  return out;
}

std::set<std::string> registry_types() {
  std::set<std::string> types;
#define NCCLBOT_POLICY_TYPE_NAME(Kind, number, Type, ...) types.insert(#Type);
  NCCLBOT_POLICIES(NCCLBOT_POLICY_TYPE_NAME)
#undef NCCLBOT_POLICY_TYPE_NAME
  return types;
}

// Every breach of the rules above, one line each; empty when the report passes.
std::vector<std::string> breaches(const std::map<std::pair<std::string, int>, KernelUsage>& kernels) {
  std::vector<std::string> out;
  for (const std::string& type : registry_types())
    for (int capacity : {0, ncclbot::kMaxReplayDelay})
      if (!kernels.count({type, capacity}))
        out.push_back(type + " (delay capacity " + std::to_string(capacity) + "): not in the report");
  const long delayed_limit = kFrameLimit + long(sizeof(ncclbot::DelayedReplayCursor));
  for (const auto& [kernel, u] : kernels) {
    const std::string name = kernel.first + " (delay capacity " + std::to_string(kernel.second) + ")";
    if (u.spill_stores != 0 || u.spill_loads != 0) out.push_back(name + ": spills");
    const long limit = kernel.second == 0 ? kFrameLimit : delayed_limit;
    if (u.frame > limit)
      out.push_back(name + ": " + std::to_string(u.frame) + " bytes of stack frame, over " +
                    std::to_string(limit));
  }
  return out;
}

std::string ptxas_entry(const std::string& type, int capacity, long frame, long spills) {
  const std::string n = std::to_string(type.size());
  const std::string mangled = "_ZN7ncclbot12_GLOBAL__N_113replay_kernelINS_" + n + type +
                              "ILi24EEENS_13ReplayCursorTILi" + std::to_string(capacity) +
                              "ELi24EEEEEvNS0_16ReplayKernelArgsE";
  return "ptxas info    : Function properties for " + mangled + "\n    " + std::to_string(frame) +
         " bytes stack frame, " + std::to_string(spills) + " bytes spill stores, " + std::to_string(spills) +
         " bytes spill loads\n";
}

}  // namespace

TEST(KernelFrames, TheCheckCatchesAFrameASpillAndAMissingKernel) {
  EXPECT_EQ(replay_kernel_of(demangle("_ZN7ncclbot12_GLOBAL__N_113replay_kernelINS_11Ucb1PolicyTILi24EEENS_"
                                      "13ReplayCursorTILi0ELi24EEEEEvNS0_16ReplayKernelArgsE")),
            std::make_pair(std::string("Ucb1PolicyT"), 0));
  std::string passing;
  for (const std::string& type : registry_types()) {
    passing += ptxas_entry(type, 0, 208, 0);
    passing +=
        ptxas_entry(type, ncclbot::kMaxReplayDelay, long(sizeof(ncclbot::DelayedReplayCursor)) + 16, 0);
  }
  const auto report = [&](const std::string& text) {
    std::istringstream in(text);
    return breaches(read_report(in));
  };
  EXPECT_TRUE(report(passing).empty());
  const auto large = report(passing + ptxas_entry("Ucb1Policy", 0, 1664, 0));  // the later entry wins
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0], "Ucb1Policy (delay capacity 0): 1664 bytes of stack frame, over 256");
  const auto spill = report(passing + ptxas_entry("ThompsonPolicy", ncclbot::kMaxReplayDelay, 100, 8));
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_EQ(spill[0], "ThompsonPolicy (delay capacity 1024): spills");
  EXPECT_EQ(report(ptxas_entry("Ucb1PolicyT", 0, 16, 0)).size(), 2 * registry_types().size() - 1);
}

TEST(KernelFrames, EveryReplayKernelKeepsItsStateOutOfItsStackFrame) {
#ifndef NCCLBOT_KERNEL_FRAMES_REPORT
  GTEST_SKIP() << "built without nvcc: no ptxas report of the kernels";
#else
  std::ifstream in(NCCLBOT_KERNEL_FRAMES_REPORT);
  ASSERT_TRUE(in) << "cannot read " << NCCLBOT_KERNEL_FRAMES_REPORT;
  const auto kernels = read_report(in);
  for (const auto& [kernel, u] : kernels) {
    RecordProperty(kernel.first + "_" + std::to_string(kernel.second), std::to_string(u.frame));
    std::printf("%-22s delay capacity %4d: %5ld bytes of stack frame, %ld/%ld bytes spilled\n",
                kernel.first.c_str(), kernel.second, u.frame, u.spill_stores, u.spill_loads);
  }
  for (const std::string& b : breaches(kernels)) ADD_FAILURE() << b;
#endif
}
