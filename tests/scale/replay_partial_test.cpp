// Partial result files: exact round trip of the loss bits, and every way a set of partials can be
// wrong (truncated, corrupted, foreign, duplicated, missing) is an error naming the culprit.
#include "ncclbot/scale/replay_partial.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ncclbot/core/error.hpp"
#include "ncclbot/scale/shard.hpp"

using namespace ncclbot;

namespace {

nlohmann::json identity(int horizon = 100) {
  return {{"program_version", "0.1.0"},
          {"command", "replay"},
          {"sweep_sha256", "ab"},
          {"policies", {"a", "b"}},
          {"contexts", {0, 2, 5}},
          {"seeds", 3},
          {"seed", 0},
          {"horizon", horizon},
          {"backend", "cpu"}};
}

// Shard i of n over 2 configs x 3 contexts; unit k's losses are k + 0.25 and -(k + 0.5), and it
// watched 1 / (k + 2) of its calls.
ReplayPartial make(int i, int n, const std::string& name, int horizon = 100) {
  ReplaySlice slice;
  slice.units = shard_units(6, {i, n});
  for (size_t j = 0; j < slice.units.size(); ++j) {
    const size_t k = slice.units.unit(j);
    slice.online.push_back(double(k) + 0.25);
    slice.final_loss.push_back(-(double(k) + 0.5));
    slice.watched.push_back(1.0 / (double(k) + 2.0));
  }
  return decode_replay_partial(encode_replay_partial(identity(horizon), {i, n}, 6, slice), name);
}

std::string message_of(const std::vector<ReplayPartial>& parts) {
  try {
    merge_replay_partials(parts);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ReplayPartial, RoundTripKeepsEveryBit) {
  ReplaySlice slice;
  slice.units = shard_units(4, {0, 1});
  // Values whose decimal forms are easy to get wrong: the smallest subnormal, -0, 0.1, 1/3.
  slice.online = {std::numeric_limits<double>::denorm_min(), -0.0, 0.1, 1.0 / 3.0};
  slice.final_loss = {std::nextafter(1.0, 2.0), 1e308, 0.0, 2.0 / 3.0};
  slice.watched = {1.0, 0.5, 1.0 / 7.0, 0.0};
  const std::string bytes = encode_replay_partial(identity(), {0, 1}, 4, slice);
  const ReplayPartial p = decode_replay_partial(bytes, "x.part");
  EXPECT_EQ(p.identity, identity());
  EXPECT_EQ(p.shard.index, 0);
  EXPECT_EQ(p.shard.count, 1);
  ASSERT_EQ(p.slice.online.size(), 4u);
  EXPECT_EQ(std::memcmp(p.slice.online.data(), slice.online.data(), 4 * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(p.slice.final_loss.data(), slice.final_loss.data(), 4 * sizeof(double)), 0);
  ASSERT_EQ(p.slice.watched.size(), 4u);
  EXPECT_EQ(std::memcmp(p.slice.watched.data(), slice.watched.data(), 4 * sizeof(double)), 0);
}

TEST(ReplayPartial, DamagedFilesAreRejectedByName) {
  ReplaySlice slice;
  slice.units = shard_units(2, {0, 1});
  slice.online = {1, 2};
  slice.final_loss = {3, 4};
  slice.watched = {1, 1};
  const std::string good = encode_replay_partial(identity(), {0, 1}, 2, slice);
  EXPECT_THROW(decode_replay_partial("hello\n", "a.part"), InputError);
  try {
    decode_replay_partial(good.substr(0, good.size() - 3), "cut.part");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.part"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
  std::string flipped = good;
  flipped.back() ^= 1;
  try {
    decode_replay_partial(flipped, "bit.part");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos);
  }
  // A header claiming 2 units for shard 0/2 of 2 units (it has 1).
  const std::string header_lie = encode_replay_partial(identity(), {0, 2}, 2, slice);
  EXPECT_THROW(decode_replay_partial(header_lie, "lie.part"), InputError);
}

// A coupled job's partials deal whole communicators (scale/shard.hpp); their identity records them.
// Every communicator list that does not cover each of the 3 contexts exactly once with integers in
// range (a repeat, a gap, a negative, a float far out of int's range, not a list) is an input
// error naming the file; the right one decodes to the blocks' units.
TEST(ReplayPartial, CommunicatorBlocksAreCheckedBeforeUse) {
  const std::vector<std::vector<int>> blocks = {{0, 2}, {1}};
  ReplaySlice slice;
  slice.units = communicator_shard_units(2, 3, blocks, {0, 2});  // blocks (0, {0,2}) and (1, {0,2})
  for (size_t j = 0; j < slice.units.size(); ++j) {
    slice.online.push_back(1.0);
    slice.final_loss.push_back(2.0);
    slice.watched.push_back(1.0);
  }
  nlohmann::json id = identity();
  id["communicators"] = blocks;
  const ReplayPartial p = decode_replay_partial(encode_replay_partial(id, {0, 2}, 6, slice), "ok.part");
  EXPECT_EQ(p.slice.units.units, (std::vector<size_t>{0, 2, 3, 5}));
  for (const nlohmann::json& bad :
       {nlohmann::json{{0, 2}, {2}}, nlohmann::json{{0, 2}}, nlohmann::json{{0, 2}, {-1}},
        nlohmann::json::parse("[[0, 2], [1e99]]"), nlohmann::json("x")}) {
    id["communicators"] = bad;
    EXPECT_THROW(decode_replay_partial(encode_replay_partial(id, {0, 2}, 6, slice), "bad.part"), InputError)
        << bad.dump();
  }
}

TEST(ReplayPartial, MergeInAnyOrderGivesUnitOrder) {
  const ReplayResults r =
      merge_replay_partials({make(2, 4, "c"), make(0, 4, "a"), make(3, 4, "d"), make(1, 4, "b")});
  EXPECT_EQ(r.num_configs, 2);
  EXPECT_EQ(r.num_contexts, 3);
  EXPECT_EQ(r.seeds, 3);
  ASSERT_EQ(r.online.size(), 6u);
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(r.online[k], double(k) + 0.25);
    EXPECT_EQ(r.final_loss[k], -(double(k) + 0.5));
    EXPECT_EQ(r.watched[k], 1.0 / (double(k) + 2.0));
  }
}

TEST(ReplayPartial, ForeignDuplicatedAndMissingPartialsAreNamed) {
  const std::string foreign = message_of({make(0, 2, "a.part"), make(1, 2, "b.part", 200)});
  EXPECT_NE(foreign.find("b.part"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("horizon"), std::string::npos) << foreign;
  const std::string other_n = message_of({make(0, 2, "a.part"), make(1, 3, "c.part")});
  EXPECT_NE(other_n.find("c.part"), std::string::npos) << other_n;
  const std::string dup = message_of({make(0, 2, "a.part"), make(1, 2, "b.part"), make(1, 2, "b2.part")});
  EXPECT_NE(dup.find("b2.part"), std::string::npos) << dup;
  EXPECT_NE(dup.find("duplicates shard 1/2 of b.part"), std::string::npos) << dup;
  EXPECT_THROW(merge_replay_partials({make(0, 3, "a"), make(2, 3, "c")}), UsageError);
  const std::string missing = message_of({make(0, 3, "a"), make(2, 3, "c")});
  EXPECT_NE(missing.find("missing shard(s) 1 of 3"), std::string::npos) << missing;
  EXPECT_THROW(merge_replay_partials({}), UsageError);
}

TEST(ReplayPartial, PerSeedLossesLandInConfigSeedContextOrder) {
  // 2 configs x 3 contexts, 2 seeds; unit k's seed s online loss is 10k + s, final -(10k + s).
  std::vector<ReplayPartial> parts;
  for (int i = 0; i < 2; ++i) {
    ReplaySlice slice;
    slice.units = shard_units(6, {i, 2});
    slice.seeds_kept = 2;
    for (size_t j = 0; j < slice.units.size(); ++j) {
      const size_t k = slice.units.unit(j);
      slice.online.push_back(double(k));
      slice.final_loss.push_back(double(k));
      slice.watched.push_back(1.0);
      for (int s = 0; s < 2; ++s) {
        slice.online_per_seed.push_back(10.0 * double(k) + s);
        slice.final_per_seed.push_back(-(10.0 * double(k) + s));
      }
    }
    nlohmann::json id = identity();
    id["seeds"] = 2;
    parts.push_back(
        decode_replay_partial(encode_replay_partial(id, {i, 2}, 6, slice), "p" + std::to_string(i)));
  }
  const ReplayResults r = merge_replay_partials(parts);
  ASSERT_EQ(r.online_per_seed.size(), 12u);
  // By hand: config 1, seed 1, context 2 is unit 1*3+2 = 5 -> 51, stored at (1*2+1)*3+2 = 11.
  EXPECT_EQ(r.online_per_seed[11], 51.0);
  EXPECT_EQ(r.final_per_seed[11], -51.0);
  // config 0, seed 1, context 0 is unit 0 -> 1, at (0*2+1)*3+0 = 3.
  EXPECT_EQ(r.online_per_seed[3], 1.0);
  // A partial without per-seed losses does not belong with these.
  ReplaySlice plain;
  plain.units = shard_units(6, {1, 2});
  plain.online = plain.final_loss = plain.watched = {0, 0, 0};
  nlohmann::json id = identity();
  id["seeds"] = 2;
  parts[1] = decode_replay_partial(encode_replay_partial(id, {1, 2}, 6, plain), "plain");
  EXPECT_THROW(merge_replay_partials(parts), InputError);
}
