// The knob lattice's links (policy/knob_lattice.hpp), built from sorted runs, against every pair
// compared by the definition (each link the nearest value of its knob in the same algorithm,
// protocol and other knob; the ring the next index with the same knobs), on random arm sets of up
// to 512 arms drawn from mixed knob grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ncclbot/policy/knob_lattice.hpp"

using namespace ncclbot;

namespace {

constexpr int kLinkArms = 512;

// The links by the definition, comparing every pair: what assign() must give.
struct PairwiseLinkSet {
  std::vector<int> up_ch, down_ch, zero_ch, first_ch, up_ck, down_ck, zero_ck, first_ck, same;
};

PairwiseLinkSet pairwise_links(const std::vector<Arm>& arms) {
  const int k = int(arms.size());
  PairwiseLinkSet l;
  for (int j = 0; j < k; ++j) {
    const Arm& a = arms[size_t(j)];
    int up_ch = -1, down_ch = -1, zero_ch = -1, first_ch = -1, up_ck = -1, down_ck = -1, zero_ck = -1,
        first_ck = -1, after = -1, before = -1;
    for (int i = 0; i < k; ++i) {
      const Arm& b = arms[size_t(i)];
      if (i != j && b.channels == a.channels && b.chunk_bytes == a.chunk_bytes) {
        if (i > j && after < 0) after = i;
        if (i < j && before < 0) before = i;
      }
      if (b.slot() != a.slot()) continue;
      if (b.chunk_bytes == a.chunk_bytes && b.channels != a.channels) {
        if (b.channels == 0)
          zero_ch = i;
        else if (first_ch < 0 || b.channels < arms[size_t(first_ch)].channels)
          first_ch = i;
        if (b.channels > a.channels && (up_ch < 0 || b.channels < arms[size_t(up_ch)].channels)) up_ch = i;
        if (b.channels != 0 && b.channels < a.channels &&
            (down_ch < 0 || b.channels > arms[size_t(down_ch)].channels))
          down_ch = i;
      }
      if (b.channels == a.channels && b.chunk_bytes != a.chunk_bytes) {
        if (b.chunk_bytes == 0)
          zero_ck = i;
        else if (first_ck < 0 || b.chunk_bytes < arms[size_t(first_ck)].chunk_bytes)
          first_ck = i;
        if (b.chunk_bytes > a.chunk_bytes && (up_ck < 0 || b.chunk_bytes < arms[size_t(up_ck)].chunk_bytes))
          up_ck = i;
        if (b.chunk_bytes != 0 && b.chunk_bytes < a.chunk_bytes &&
            (down_ck < 0 || b.chunk_bytes > arms[size_t(down_ck)].chunk_bytes))
          down_ck = i;
      }
    }
    const bool ch0 = a.channels == 0, ck0 = a.chunk_bytes == 0;
    l.up_ch.push_back(ch0 ? -1 : up_ch);
    l.down_ch.push_back(ch0 ? -1 : down_ch);
    l.zero_ch.push_back(ch0 ? -1 : zero_ch);
    l.first_ch.push_back(ch0 ? first_ch : -1);
    l.up_ck.push_back(ck0 ? -1 : up_ck);
    l.down_ck.push_back(ck0 ? -1 : down_ck);
    l.zero_ck.push_back(ck0 ? -1 : zero_ck);
    l.first_ck.push_back(ck0 ? first_ck : -1);
    l.same.push_back(after >= 0 ? after : before >= 0 ? before : j);
  }
  return l;
}

// A random context: some algorithm x protocol pairs, each with a random subset of a channel x chunk
// grid (NCCL's own 0 on either knob or not), in Arm order, at most kLinkArms arms.
std::vector<Arm> random_link_arms(std::mt19937& rng) {
  const uint16_t channel_values[] = {0, 1, 2, 4, 8, 16, 24, 32, 64};
  const uint32_t chunk_values[] = {0, 1920, 4096, 65536, 131072, 524288, 1 << 20};
  std::vector<Arm> arms;
  for (int slot = 0; slot < kNumNcclArms; ++slot) {
    if (rng() % 3 == 0) continue;
    const unsigned keep = 2 + rng() % 8;  // keep each grid point with probability keep / 10
    for (uint16_t ch : channel_values)
      for (uint32_t ck : chunk_values)
        if (rng() % 10 < keep) arms.push_back(Arm{slot_algo(slot), slot_proto(slot), ch, ck});
  }
  std::sort(arms.begin(), arms.end());
  if (arms.size() > size_t(kLinkArms)) arms.resize(size_t(kLinkArms));
  return arms;
}

}  // namespace

TEST(KnobLatticeLinks, SortedRunsGiveThePairwiseLinks) {
  std::mt19937 rng(20261207);
  for (int trial = 0; trial < 60; ++trial) {
    const std::vector<Arm> arms = random_link_arms(rng);
    const int k = int(arms.size());
    ArmSetT<kLinkArms> set;
    ArmIndexSet<kLinkArms> mask = ArmIndexSet<kLinkArms>::none();
    for (int i = 0; i < k; ++i) mask.set(i);
    set.assign(mask);
    static KnobLatticeT<kLinkArms> lattice;
    lattice.assign(set, arms.data());
    const PairwiseLinkSet want = pairwise_links(arms);
    for (int j = 0; j < k; ++j) {
      ASSERT_EQ(lattice.up_channels[j], want.up_ch[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.down_channels[j], want.down_ch[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.zero_channels[j], want.zero_ch[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.first_channels[j], want.first_ch[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.up_chunk[j], want.up_ck[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.down_chunk[j], want.down_ck[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.zero_chunk[j], want.zero_ck[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.first_chunk[j], want.first_ck[size_t(j)]) << trial << " arm " << j;
      ASSERT_EQ(lattice.same_knobs[j], want.same[size_t(j)]) << trial << " arm " << j;
    }
  }
}

// The device sorts with heap_sort_indices (the host with std::sort): on random keys with repeats,
// ordered by (key, index), it gives std::sort's order.
TEST(KnobLatticeLinks, TheDeviceHeapSortSortsAsStdSort) {
  std::mt19937 rng(7);
  for (int n : {0, 1, 2, 3, 17, 64, 511, 512}) {
    std::vector<int> key(static_cast<size_t>(n));
    for (int& v : key) v = int(rng() % 9);
    const auto less = [&](int a, int b) {
      return key[size_t(a)] != key[size_t(b)] ? key[size_t(a)] < key[size_t(b)] : a < b;
    };
    std::vector<KnobLatticeT<kLinkArms>::Index> heap(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) heap[size_t(i)] = want[size_t(i)] = KnobLatticeT<kLinkArms>::Index(n - 1 - i);
    KnobLatticeT<kLinkArms>::heap_sort_indices(heap.data(), n, less);
    std::sort(want.begin(), want.end(), [&](auto a, auto b) { return less(int(a), int(b)); });
    EXPECT_EQ(heap, want) << n;
  }
}
