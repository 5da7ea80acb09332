// A run forced with per-function values (NCCL_ALGO=AllReduce:Tree, as `plan` writes them for NCCL
// 2.31 and later): ingest takes the list of the run's own collective; a value naming other
// functions only forces nothing here, and one NCCL refuses is an error naming the place. Logs are
// support/nccl_tests_rows.hpp's hand-written all_reduce_perf JSON (2 hosts x 1 rank) with its
// environment replaced.
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "support/nccl_tests_rows.hpp"

namespace ncclbot::test {
namespace {

nccl_tests::ParsedLog per_function_log(const std::string& env) {
  std::string s = per_iteration_json();
  const std::string from = R"("env":["NCCL_ALGO=Ring","NCCL_PROTO=LL"])";
  s.replace(s.find(from), from.size(), R"("env":[)" + env + "]");
  return nccl_tests::parse_log(s, "/m/r.json");
}

std::string per_function_error_of(const nccl_tests::ParsedLog& log) {
  try {
    nccl_tests::ingest_parsed({log}, nullptr, nccl_tests::IngestOptions{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(IngestPerFunction, TheRunsOwnCollectivesListIsItsArm) {
  const nccl_tests::IngestResult r = nccl_tests::ingest_parsed(
      {per_function_log(R"("NCCL_ALGO=ring;AllReduce:Tree","NCCL_PROTO=allreduce:LL")")}, nullptr, {});
  ASSERT_EQ(r.runs.size(), 1u);
  ASSERT_TRUE(r.runs[0].used);
  const SweepView v = r.sweep.view();
  ASSERT_EQ(v.num_contexts, 2);  // 1 KiB and 4 KiB
  for (int c = 0; c < v.num_contexts; ++c) {
    EXPECT_TRUE(v.mask(c).has(arm_slot(Algo::kTree, Proto::kLL))) << c;
    EXPECT_FALSE(v.mask(c).has(arm_slot(Algo::kRing, Proto::kLL))) << c;
  }
}

TEST(IngestPerFunction, AValueNamingOtherFunctionsOnlyForcesNothingHere) {
  EXPECT_NE(per_function_error_of(per_function_log(R"("NCCL_ALGO=AllGather:Ring","NCCL_PROTO=AllGather:LL")"))
                .find("no forced arm: neither NCCL_ALGO nor NCCL_PROTO forces this collective"),
            std::string::npos);
  // The algorithm named for this function, the protocol for another: NCCL chose the protocol.
  EXPECT_NE(per_function_error_of(per_function_log(R"("NCCL_ALGO=AllReduce:Ring","NCCL_PROTO=Broadcast:LL")"))
                .find("NCCL_PROTO unknown: the algorithm is forced (Ring)"),
            std::string::npos);
}

TEST(IngestPerFunction, AValueNcclRefusesOrThatAllowsSeveralArmsIsAnError) {
  EXPECT_NE(
      per_function_error_of(per_function_log(R"("NCCL_ALGO=AllReduce:Ring;Tree","NCCL_PROTO=LL")"))
          .find("/m/r.json:1: NCCL_ALGO=AllReduce:Ring;Tree (JSON env): NCCL refuses it: every entry after "
                "the first must name a function"),
      std::string::npos);
  EXPECT_NE(per_function_error_of(per_function_log(R"("NCCL_ALGO=Ring","NCCL_PROTO=AllReduce:LL,Simple")"))
                .find("NCCL_PROTO=LL,Simple (JSON env) allows several choices"),
            std::string::npos);
}

}  // namespace
}  // namespace ncclbot::test
