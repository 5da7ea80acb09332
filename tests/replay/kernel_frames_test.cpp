// The replay kernels' per-thread stack frames, as ptxas reports them for sm_90 (docs/cuda.md
// "Per-thread state"), checked without a GPU: the build compiles kernels/replay_slots.cu and
// kernels/replay_knobs.cu with `-Xptxas -v` and keeps each report beside its object
// (cmake/keep_ptxas_report.sh), and this test reads both.
//   - no replay kernel spills a register;
//   - every undelayed slot kernel (ReplayCursorT<0, 24>: the policy and cursor in shared memory) has
//     a frame of at most 256 bytes;
//   - a delayed slot kernel at most 256 bytes more than its cursor, which stays in local memory by
//     design (its ring of calls in flight, read and written at one position per step, the same
//     position in every lane of a warp, so local memory's interleaving coalesces it);
//   - a knob kernel (512 arms: the policy and cursor in local memory by design) at most its policy
//     and cursor, one double per arm (a step's temporaries that grow with the arms) and 256 bytes;
//   - both kernels of every policy type of the registry are in each report.
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

// A replay kernel: its policy type, the cursor's delay capacity and the arm capacity.
struct KernelName {
  std::string type;
  int capacity = -1, arms = 0;
  auto operator<=>(const KernelName&) const = default;
};

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

// "replay_kernel<ncclbot::Ucb1PolicyT<24>, ncclbot::ReplayCursorT<0, 24> >" -> {"Ucb1PolicyT", 0, 24},
// from the demangled name; capacity -1 for any other function.
KernelName replay_kernel_of(const std::string& demangled) {
  static const std::regex kernel(
      R"(replay_kernel<ncclbot::(\w+)<(\d+)>, ncclbot::ReplayCursorT<(\d+), (\d+)> ?>)");
  std::smatch m;
  if (!std::regex_search(demangled, m, kernel) || m[2].str() != m[4].str()) return {};
  return {m[1].str(), std::stoi(m[3].str()), std::stoi(m[2].str())};
}

// The replay kernels of a ptxas -v report -> usage.
std::map<KernelName, KernelUsage> read_report(std::istream& in) {
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex usage(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  std::map<KernelName, KernelUsage> out;
  KernelName current;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, properties)) {
      current = replay_kernel_of(demangle(m[1].str()));
    } else if (current.capacity >= 0 && std::regex_search(line, m, usage)) {
      out[current] = {std::stol(m[1].str()), std::stol(m[2].str()), std::stol(m[3].str())};
      current = {};
    }
  }
  return out;
}

// Each registered policy type's size at the knob capacity.
std::map<std::string, long> knob_policy_bytes() {
  std::map<std::string, long> bytes;
#define NCCLBOT_POLICY_TYPE_SIZE(Kind, number, Type, ...) \
  bytes[#Type] = long(sizeof(ncclbot::Type<ncclbot::kKnobReplayArms>));
  NCCLBOT_POLICIES(NCCLBOT_POLICY_TYPE_SIZE)
#undef NCCLBOT_POLICY_TYPE_SIZE
  return bytes;
}

// A knob kernel's temporaries of one step grow with the arms: one double per arm (UCB1's indices
// of the arms while some are in flight, 4 KB at 512 arms).
constexpr long kKnobStepTemporaries = 8 * long(ncclbot::kKnobReplayArms);

// The frame a kernel may have under the rules above.
long frame_limit(const KernelName& k) {
  using namespace ncclbot;
  if (k.arms == kNumArms) return kFrameLimit + (k.capacity == 0 ? 0 : long(sizeof(DelayedReplayCursor)));
  const long cursor = k.capacity == 0 ? long(sizeof(ReplayCursorT<0, kKnobReplayArms>))
                                      : long(sizeof(ReplayCursorT<kMaxReplayDelay, kKnobReplayArms>));
  const std::map<std::string, long> policies = knob_policy_bytes();
  const auto policy = policies.find(k.type);
  return kFrameLimit + kKnobStepTemporaries + cursor + (policy == policies.end() ? 0 : policy->second);
}

// Every breach of the rules above in the report of the kernels with `arms` arms, one line each;
// empty when the report passes.
std::vector<std::string> breaches(const std::map<KernelName, KernelUsage>& kernels, int arms) {
  std::vector<std::string> out;
  for (const auto& [type, bytes] : knob_policy_bytes())
    for (int capacity : {0, ncclbot::kMaxReplayDelay})
      if (!kernels.count({type, capacity, arms}))
        out.push_back(type + " (delay capacity " + std::to_string(capacity) + ", " + std::to_string(arms) +
                      " arms): not in the report");
  for (const auto& [kernel, u] : kernels) {
    const std::string name = kernel.type + " (delay capacity " + std::to_string(kernel.capacity) + ", " +
                             std::to_string(kernel.arms) + " arms)";
    if (kernel.arms != arms) out.push_back(name + ": in the report of " + std::to_string(arms) + " arms");
    if (u.spill_stores != 0 || u.spill_loads != 0) out.push_back(name + ": spills");
    const long limit = frame_limit(kernel);
    if (u.frame > limit)
      out.push_back(name + ": " + std::to_string(u.frame) + " bytes of stack frame, over " +
                    std::to_string(limit));
  }
  return out;
}

std::string ptxas_entry(const std::string& type, int capacity, long frame, long spills, int arms = 24) {
  const std::string n = std::to_string(type.size()), a = std::to_string(arms);
  const std::string mangled = "_ZN7ncclbot14replay_kernels13replay_kernelINS_" + n + type + "ILi" + a +
                              "EEENS_13ReplayCursorTILi" + std::to_string(capacity) + "ELi" + a +
                              "EEEEEvNS0_16ReplayKernelArgsE";
  return "ptxas info    : Function properties for " + mangled + "\n    " + std::to_string(frame) +
         " bytes stack frame, " + std::to_string(spills) + " bytes spill stores, " + std::to_string(spills) +
         " bytes spill loads\n";
}

// Reads a report file and checks it against the rules for `arms` arms, printing each kernel's frame.
void check_report_file(const char* path, int arms) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  const auto kernels = read_report(in);
  for (const auto& [kernel, u] : kernels) {
    ::testing::Test::RecordProperty(
        kernel.type + "_" + std::to_string(kernel.capacity) + "_" + std::to_string(arms),
        std::to_string(u.frame));
    std::printf("%-22s delay capacity %4d, %3d arms: %6ld bytes of stack frame, %ld/%ld bytes spilled\n",
                kernel.type.c_str(), kernel.capacity, arms, u.frame, u.spill_stores, u.spill_loads);
  }
  for (const std::string& b : breaches(kernels, arms)) ADD_FAILURE() << b;
}

}  // namespace

TEST(KernelFrames, TheCheckCatchesAFrameASpillAndAMissingKernel) {
  const KernelName ucb1 =
      replay_kernel_of(demangle("_ZN7ncclbot14replay_kernels13replay_kernelINS_11Ucb1PolicyTILi24EEENS_"
                                "13ReplayCursorTILi0ELi24EEEEEvNS0_"
                                "16ReplayKernelArgsE"));
  EXPECT_EQ(ucb1, (KernelName{"Ucb1PolicyT", 0, 24}));
  const auto report = [&](const std::string& text, int arms) {
    std::istringstream in(text);
    return breaches(read_report(in), arms);
  };
  std::string slots, knobs;
  const long knob_cursor = long(sizeof(ncclbot::ReplayCursorT<0, ncclbot::kKnobReplayArms>));
  for (const auto& [type, bytes] : knob_policy_bytes()) {
    slots += ptxas_entry(type, 0, 208, 0);
    slots += ptxas_entry(type, ncclbot::kMaxReplayDelay, long(sizeof(ncclbot::DelayedReplayCursor)) + 16, 0);
    knobs += ptxas_entry(type, 0, bytes + knob_cursor + 200, 0, 512);
    knobs += ptxas_entry(type, ncclbot::kMaxReplayDelay, bytes + knob_cursor, 0, 512);
  }
  EXPECT_TRUE(report(slots, 24).empty());
  EXPECT_TRUE(report(knobs, 512).empty());
  const auto large = report(slots + ptxas_entry("Ucb1PolicyT", 0, 1664, 0), 24);  // the later entry wins
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0], "Ucb1PolicyT (delay capacity 0, 24 arms): 1664 bytes of stack frame, over 256");
  // A knob kernel whose frame holds 4 KB more than its limit.
  const long ucb1_limit = knob_policy_bytes().at("Ucb1PolicyT") + knob_cursor + kKnobStepTemporaries + 256;
  const auto knob_large = report(knobs + ptxas_entry("Ucb1PolicyT", 0, ucb1_limit + 4096, 0, 512), 512);
  ASSERT_EQ(knob_large.size(), 1u);
  EXPECT_EQ(knob_large[0], "Ucb1PolicyT (delay capacity 0, 512 arms): " + std::to_string(ucb1_limit + 4096) +
                               " bytes of stack frame, over " + std::to_string(ucb1_limit));
  const auto spill = report(slots + ptxas_entry("ThompsonPolicyT", ncclbot::kMaxReplayDelay, 100, 8), 24);
  ASSERT_EQ(spill.size(), 1u);
  EXPECT_EQ(spill[0], "ThompsonPolicyT (delay capacity 1024, 24 arms): spills");
  EXPECT_EQ(report(ptxas_entry("Ucb1PolicyT", 0, 16, 0), 24).size(), 2 * knob_policy_bytes().size() - 1);
  // The slot kernels' report is no knob report: every knob kernel is missing, every slot one misplaced.
  EXPECT_EQ(report(slots, 512).size(), 4 * knob_policy_bytes().size());
}

TEST(KernelFrames, EveryReplayKernelKeepsItsStateWhereItsDesignSays) {
#if !defined(NCCLBOT_SLOT_KERNEL_FRAMES_REPORT) || !defined(NCCLBOT_KNOB_KERNEL_FRAMES_REPORT)
  GTEST_SKIP() << "built without nvcc: no ptxas report of the kernels";
#else
  check_report_file(NCCLBOT_SLOT_KERNEL_FRAMES_REPORT, ncclbot::kNumArms);
  check_report_file(NCCLBOT_KNOB_KERNEL_FRAMES_REPORT, ncclbot::kKnobReplayArms);
#endif
}
