#include "ncclbot/core/names.hpp"

#include <gtest/gtest.h>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/name_table.hpp"

using namespace ncclbot;

TEST(Names, AlgoIndicesAreNcclsOwn) {
  // nccl_common.h: TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6.
  EXPECT_EQ(int(*parse_algo("Tree")), 0);
  EXPECT_EQ(int(*parse_algo("RING")), 1);
  EXPECT_EQ(int(*parse_algo("collnetdirect")), 2);
  EXPECT_EQ(int(*parse_algo("CollNet_Chain")), 3);
  EXPECT_EQ(int(*parse_algo("nvls")), 4);
  EXPECT_EQ(int(*parse_algo("NVLS_TREE")), 5);
  EXPECT_EQ(int(*parse_algo("pat")), 6);
  EXPECT_FALSE(parse_algo("Butterfly"));
  EXPECT_FALSE(parse_algo(""));
}

TEST(Names, ProtoAndCollectiveIndices) {
  EXPECT_EQ(int(*parse_proto("ll")), 0);
  EXPECT_EQ(int(*parse_proto("LL128")), 1);
  EXPECT_EQ(int(*parse_proto("SIMPLE")), 2);
  EXPECT_FALSE(parse_proto("LL64"));
  // ncclFunc_t: Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4, ... Gather 10.
  EXPECT_EQ(int(*parse_collective("broadcast")), 0);
  EXPECT_EQ(int(*parse_collective("all_reduce")), 4);
  EXPECT_EQ(int(*parse_collective("allgather")), 2);
  EXPECT_EQ(int(*parse_collective("reduce_scatter")), 3);
  EXPECT_EQ(int(*parse_collective("alltoall")), 8);
  EXPECT_EQ(int(*parse_collective("Gather")), 10);
  EXPECT_FALSE(parse_collective("allreduce2"));
}

TEST(Names, PrintsNcclSpellingAndRoundTrips) {
  EXPECT_EQ(algo_name(Algo::kNvlsTree), "NVLSTree");
  EXPECT_EQ(algo_name(Algo::kCollNetDirect), "CollNetDirect");
  EXPECT_EQ(proto_name(Proto::kSimple), "Simple");
  EXPECT_EQ(collective_name(Collective::kReduceScatter), "ReduceScatter");
  for (int a = 0; a < kNumAlgos; ++a) EXPECT_EQ(int(*parse_algo(algo_name(Algo(a)))), a);
  for (int p = 0; p < kNumProtos; ++p) EXPECT_EQ(int(*parse_proto(proto_name(Proto(p)))), p);
  for (int c = 0; c < kNumCollectives; ++c)
    EXPECT_EQ(int(*parse_collective(collective_name(Collective(c)))), c);
}

TEST(ArmSlots, SlotIsAlgoTimesThreePlusProto) {
  EXPECT_EQ(kNumNcclArms, 21);  // NCCL's [7][3] cost table
  EXPECT_EQ(kNumArms, 24);      // and the simulated HiPIPE row
  EXPECT_EQ(arm_slot(Algo::kTree, Proto::kLL), 0);
  EXPECT_EQ(arm_slot(Algo::kRing, Proto::kSimple), 5);
  EXPECT_EQ(arm_slot(Algo::kPat, Proto::kSimple), 20);
  for (int s = 0; s < kNumArms; ++s) EXPECT_EQ(arm_slot(slot_algo(s), slot_proto(s)), s);
  ArmMask m;
  m.set(0);
  m.set(20);
  EXPECT_TRUE(m.has(20));
  EXPECT_FALSE(m.has(19));
  EXPECT_EQ(m.count(), 2);
}

TEST(ArmSlots, HiPipeIsSlot23SimpleOnlyAndNeverAnNcclArm) {
  EXPECT_EQ(kHiPipeSlot, 23);
  EXPECT_EQ(slot_algo(kHiPipeSlot), Algo::kHiPipe);
  EXPECT_EQ(slot_proto(kHiPipeSlot), Proto::kSimple);
  EXPECT_EQ(algo_name(Algo::kHiPipe), "HiPIPE");
  EXPECT_EQ(parse_algo("hipipe"), Algo::kHiPipe);
  EXPECT_FALSE(parse_nccl_algo("HiPIPE").has_value());  // no nccl-tests log or NCCL_ALGO names it
  EXPECT_EQ(parse_nccl_algo("nvls_tree"), Algo::kNvlsTree);
  for (int s = 0; s < kNumArms; ++s) {
    EXPECT_EQ(is_nccl_slot(s), s < 21) << s;
    EXPECT_EQ(is_arm_slot(s), s < 21 || s == 23) << s;  // HiPIPE/LL and HiPIPE/LL128 do not exist
  }
  ArmMask m;
  m.set(5);
  m.set(kHiPipeSlot);
  EXPECT_EQ(m.nccl_arms().bits, 1u << 5);
}

TEST(NcclArgmin, StrictLessSoTiesGoToLowestSlotAndNegativesAreIgnored) {
  float table[kNumArms];
  for (float& t : table) t = -1.0f;
  ArmMask all{(1u << kNumArms) - 1};
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), -1);
  table[arm_slot(Algo::kRing, Proto::kLL)] = 5.0f;
  table[arm_slot(Algo::kTree, Proto::kSimple)] = 5.0f;  // same time, lower slot (2 < 3)
  table[arm_slot(Algo::kNvls, Proto::kSimple)] = 7.0f;
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), arm_slot(Algo::kTree, Proto::kSimple));
  table[arm_slot(Algo::kPat, Proto::kLL)] = 4.0f;
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), arm_slot(Algo::kPat, Proto::kLL));
  ArmMask no_pat{all.bits & ~(1u << arm_slot(Algo::kPat, Proto::kLL))};
  EXPECT_EQ(nccl_argmin(no_pat, [&](int s) { return table[s]; }), arm_slot(Algo::kTree, Proto::kSimple));
}

// The matching rule of core/name_table.hpp, case by case.
TEST(NameTable, MatchingIgnoresCaseUnderscoresAndDashesOnly) {
  static_assert(name_matches("all_reduce", "AllReduce"));
  static_assert(name_matches("-NVLS-tree_", "NVLSTree"));
  static_assert(!name_matches("", "Tree") && !name_matches("_-_", "Tree") && !name_matches("Tree", ""));
  static_assert(!name_matches("Tre", "Tree") && !name_matches("Trees", "Tree") &&
                !name_matches("T ree", "Tree"));
  static_assert(find_name("simple", kProtoNames) == 2 && find_name("LL64", kProtoNames) == -1);
  // A count limits the search: HiPIPE (index 7) is an algorithm but not one of NCCL's seven.
  static_assert(find_name("hipipe", kAlgoNames) == 7 && find_name("hipipe", kAlgoNames, kNumNcclAlgos) == -1);
  EXPECT_EQ(int(*parse_algo("HiPIPE")), 7);
  EXPECT_FALSE(parse_nccl_algo("HiPIPE"));
  EXPECT_THROW(algo_name(Algo(kNumAlgos)), std::out_of_range);
}

// One "usable arm" rule for every table: non-negative and finite, 0 included.
TEST(UsableCost, NonNegativeAndFinite) {
  static_assert(usable_cost(0.0) && usable_cost(3.3e38f) && usable_cost(1e308));
  static_assert(!usable_cost(-1.0) && !usable_cost(-0.5) && !usable_cost(__builtin_inf()) &&
                !usable_cost(__builtin_nan("")));
  // nccl_argmin applies it: a huge finite time can be chosen, infinity and NaN never are.
  float table[kNumArms];
  for (float& t : table) t = -1.0f;
  const ArmMask all{(1u << kNumArms) - 1};
  table[3] = __builtin_inff();
  table[4] = __builtin_nanf("");
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), -1);
  table[9] = 3.3e38f;
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), 9);
  table[10] = 0.0f;
  EXPECT_EQ(nccl_argmin(all, [&](int s) { return table[s]; }), 10);
}

// An arm's label as reports and tables write it, and back: NCCL's own knobs print no knobs.
TEST(Names, ArmLabelsRoundTripWithTheirKnobs) {
  using namespace ncclbot;
  const Arm plain{Algo::kRing, Proto::kSimple, 0, 0};
  const Arm knobs{Algo::kNvlsTree, Proto::kLL128, 8, 3840};
  EXPECT_EQ(arm_label(plain), "Ring/Simple");
  EXPECT_EQ(arm_label(knobs), "NVLSTree/LL128 channels=8 chunk_bytes=3840");
  EXPECT_EQ(parse_arm_label("Ring/Simple"), plain);
  EXPECT_EQ(parse_arm_label(arm_label(knobs)), knobs);
  EXPECT_EQ(parse_arm_label("Ring/Simple channels=0 chunk_bytes=65536"),
            (Arm{Algo::kRing, Proto::kSimple, 0, 65536}));
  for (const char* bad : {"Ring", "Ring/Fast", "Ring/Simple channels=65 chunk_bytes=0",
                          "Ring/LL128 channels=1 chunk_bytes=3000", "Ring/Simple channels=1", "Ring/Simple x",
                          "Ring/Simple channels=0 chunk_bytes=0", "Ring/Simple channels=1 chunk_bytes=512 y"})
    EXPECT_FALSE(parse_arm_label(bad)) << bad;
}
