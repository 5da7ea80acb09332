// `ncclbot bench --cuda-block N...` times the CUDA kernels at several block sizes (where the CPU
// backend times thread counts); asked of the CPU backend, or with a block outside 1..1024, it is a
// usage error (exit 2, one line) before any device is looked for. The timing itself is a gpu test
// (tests/gpu/cuda_engine_test.cpp, BenchReportsStepsPerSecond).
#include <gtest/gtest.h>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

TEST(BenchCudaBlockCli, OnlyForTheCudaBackendAndWithinOneToOneThousandTwentyFour) {
  const CliResult cpu = run_cli("bench --backend cpu --cuda-block 64 --policy ucb1 --arms 6");
  EXPECT_EQ(cpu.exit_code, 2);
  EXPECT_NE(cpu.err.find("--cuda-block needs --backend cuda"), std::string::npos) << cpu.err;
  for (const char* b : {"0", "2000"}) {
    const CliResult bad = run_cli(std::string("bench --backend cuda --policy ucb1 --cuda-block 64 ") + b);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find(std::string("--cuda-block: ") + b + " is not in 1..1024"), std::string::npos)
        << bad.err;
  }
}

}  // namespace
}  // namespace ncclbot::test
