// The algSelection string names exactly one of NCCL's general kernels, by NCCL 2.32's registry names
// and its prefix grammar (NVIDIA/nccl src/config/algorithm_registry.cc and algorithm_parser.cc).
#include <gtest/gtest.h>

#include "alg_selection.hpp"

namespace {

using ncclbot::Algo;
using ncclbot::Arm;
using ncclbot::Proto;
using ncclbot::sweep_tool::alg_selection;

TEST(SweepAlgSelection, ANameThatPrefixesAnotherExcludesIt) {
  // "RING_LL" is a prefix of "RING_LL128": alone it would select both.
  EXPECT_EQ(alg_selection(Arm{Algo::kRing, Proto::kLL, 0, 0}), "RING_LL+^RING_LL128");
  EXPECT_EQ(alg_selection(Arm{Algo::kTree, Proto::kLL, 4, 0}), "TREE_LL+^TREE_LL128");
}

TEST(SweepAlgSelection, UniqueNamesStandAlone) {
  EXPECT_EQ(alg_selection(Arm{Algo::kRing, Proto::kLL128, 0, 0}), "RING_LL128");
  EXPECT_EQ(alg_selection(Arm{Algo::kTree, Proto::kSimple, 0, 0}), "TREE_SIMPLE");
  // "NVLS_SIMPLE" does not prefix "NVLSTREE_SIMPLE" (the underscore differs).
  EXPECT_EQ(alg_selection(Arm{Algo::kNvls, Proto::kSimple, 0, 0}), "NVLS_SIMPLE");
  EXPECT_EQ(alg_selection(Arm{Algo::kCollNetDirect, Proto::kSimple, 0, 0}), "COLLNET_DIRECT_SIMPLE");
  EXPECT_EQ(alg_selection(Arm{Algo::kPat, Proto::kSimple, 0, 0}), "PAT_SIMPLE");
}

TEST(SweepAlgSelection, NoKernelNoSelection) {
  EXPECT_FALSE(alg_selection(Arm{Algo::kNvls, Proto::kLL, 0, 0}));
  EXPECT_FALSE(alg_selection(Arm{Algo::kPat, Proto::kLL128, 0, 0}));
  EXPECT_FALSE(alg_selection(Arm{Algo::kCollNetChain, Proto::kLL, 0, 0}));
  EXPECT_FALSE(alg_selection(Arm{Algo::kHiPipe, Proto::kSimple, 0, 0}));
}

}  // namespace
