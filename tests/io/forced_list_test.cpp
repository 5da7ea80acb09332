// NCCL_ALGO / NCCL_PROTO values read as NCCL's parseList reads them (NVIDIA/nccl
// src/tuning/cost_model.cc): the expected lists are worked out by hand from its grammar.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ncclbot/io/nccl_tests/forced_list.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;

TEST(ForcedList, APlainValueIsEveryFunctionsList) {
  EXPECT_EQ(list_for_collective("Ring", Collective::kAllReduce), "Ring");
  EXPECT_EQ(list_for_collective("Ring", Collective::kBroadcast), "Ring");
  EXPECT_EQ(list_for_collective("^LL128", Collective::kAllGather), "^LL128");
}

TEST(ForcedList, AFunctionsOwnListReplacesTheFirstAndNamesNoOther) {
  EXPECT_EQ(list_for_collective("AllReduce:Ring", Collective::kAllReduce), "Ring");
  EXPECT_EQ(list_for_collective("AllReduce:Ring", Collective::kAllGather), std::nullopt);
  // NCCL's own example: ring,collnetdirect for all, tree,collnetdirect for allreduce, ring for broadcast.
  const char* v = "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring";
  EXPECT_EQ(list_for_collective(v, Collective::kAllReduce), "tree,collnetdirect");
  EXPECT_EQ(list_for_collective(v, Collective::kBroadcast), "ring");
  EXPECT_EQ(list_for_collective(v, Collective::kReduceScatter), "ring,collnetdirect");
  // Functions are matched without case; a later entry for the same function wins.
  EXPECT_EQ(list_for_collective("allreduce:Ring;ALLREDUCE:Tree", Collective::kAllReduce), "Tree");
  // strtok skips empty entries.
  EXPECT_EQ(list_for_collective("AllGather:Ring;", Collective::kAllGather), "Ring");
}

TEST(ForcedList, WhatNcclRefusesAtInitIsRefused) {
  for (const char* bad :
       {"AllReduce:Ring;Tree", "Alltoall:Ring", "AllReduce:", "AllReduce:Ring:LL", ";Ring", ""})
    EXPECT_THROW(list_for_collective(bad, Collective::kAllReduce), std::invalid_argument) << bad;
  // A collective NCCL's variables do not name cannot be forced by a per-function value.
  EXPECT_THROW(list_for_collective("AllReduce:Ring", Collective::kSendRecv), std::invalid_argument);
}

TEST(ForcedList, APerFunctionValueNamesTheFunctionAsNcclSpellsIt) {
  EXPECT_EQ(per_function_value(Collective::kAllReduce, "Ring"), "AllReduce:Ring");
  EXPECT_EQ(per_function_value(Collective::kReduceScatter, "LL128"), "ReduceScatter:LL128");
  EXPECT_EQ(per_function_value(Collective::kBroadcast, "Simple"), "Broadcast:Simple");
  EXPECT_THROW(per_function_value(Collective::kAllToAll, "Ring"), std::invalid_argument);
}
