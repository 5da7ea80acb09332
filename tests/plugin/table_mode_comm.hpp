#pragma once
// A tuner v6 communicator in table mode (NCCLBOT_TABLE = a given file), for the tests of what a
// table file says to NCCL. The recorded log is cleared first, so it holds what this table caused.
#include <gtest/gtest.h>

#include <string>

#include "plugin/plugin_loader.hpp"

namespace ncclbot::test {

struct TableModeComm {
  EnvVar mode, table;
  void* ctx = nullptr;
  TableModeComm(const std::string& path, int nranks, int nnodes)
      : mode("NCCLBOT_MODE", "table"), table("NCCLBOT_TABLE", path) {
    clear_log();
    EXPECT_EQ(
        plugin().v6->init(&ctx, 0x7ab, size_t(nranks), size_t(nnodes), recording_logger, nullptr, nullptr),
        kNcclSuccess);
  }
  ~TableModeComm() { plugin().v6->finalize(ctx); }
  TableModeComm(const TableModeComm&) = delete;
  TableModeComm& operator=(const TableModeComm&) = delete;

  // One AllReduce of `bytes` on two_arms() (Tree/LL at 10 us, Ring/Simple at 20 us): the slot NCCL
  // then runs (algo * 3 + proto) and, in `nchannels`, what the tuner left of NCCL's 0.
  int all_reduce(size_t bytes, int* nchannels) {
    CostTable7x3 t = two_arms();
    *nchannels = 0;
    EXPECT_EQ(plugin().v6->getCollInfo(ctx, 4, bytes, 1, t.ptr(), 7, 3, 0, nchannels), kNcclSuccess);
    return t.pick();
  }
};

}  // namespace ncclbot::test
