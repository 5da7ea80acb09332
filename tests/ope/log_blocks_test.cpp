// A decision log as blocks (ope/log_blocks.hpp) and the block bootstrap (ope/block_bootstrap.hpp):
// the block length follows the documented rule (hand-computed lengths), each block holds exactly
// the sums of its calls (recomputed here from the calls, cut at multiples of the final length),
// a log read as a stream gives the blocks of the same log read whole, rotated siblings read
// together give the blocks of one file, overlapping files and an index that goes back are refused,
// the stream's memory does not grow with the calls, and the intervals are those of drawing whole
// blocks per context, written out plainly here.
#include "ncclbot/ope/log_blocks.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/replay_method.hpp"
#include "ncclbot/stats/resample_stream.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/numpy_quantile.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

OpeContext six_arm_context(uint64_t bytes) {
  OpeContext c;
  c.collective = 4;
  c.bytes = bytes;
  c.nodes = 2;
  c.ranks = 16;
  c.nccl_slot = 4;
  for (int s = 0; s < kNumNcclArms; ++s) c.cost_us[s] = s < 6 ? 10.0f + float(s) : -1.0f;
  for (int s = 0; s < 6; ++s) c.mask.set(s);
  return c;
}

// n calls of context 0: slot i mod 3, probability 1/2 or 1/4, latency i + 1 (whole numbers and
// powers of two, so every sum is exact in any order).
OpeData calls_of_one_context(size_t n) {
  OpeData d;
  d.contexts = {six_arm_context(4096)};
  for (size_t i = 0; i < n; ++i)
    d.calls.push_back({0, int(i % 3), i % 2 ? 0.25 : 0.5, double(i + 1), uint64_t(i)});
  return d;
}

std::string write_log_bytes(const std::string& bytes) {
  static int n = 0;
  const std::string path = temp_dir() + "/blocks" + std::to_string(n++) + ".log";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string blocks_error_of(const std::vector<std::string>& paths) {
  try {
    read_log_blocks(paths, BlockRule{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_same_blocks(const LogBlocks& a, const LogBlocks& b) {
  ASSERT_EQ(a.contexts.size(), b.contexts.size());
  EXPECT_EQ(a.calls, b.calls);
  for (size_t x = 0; x < a.contexts.size(); ++x) {
    const ContextBlocks &p = a.blocks[x], &q = b.blocks[x];
    EXPECT_EQ(a.contexts[x].bytes, b.contexts[x].bytes);
    EXPECT_EQ(a.contexts[x].mask.bits, b.contexts[x].mask.bits);
    EXPECT_EQ(p.calls, q.calls);
    EXPECT_EQ(p.length, q.length);
    EXPECT_EQ(p.first_index, q.first_index);
    EXPECT_EQ(p.last_index, q.last_index);
    EXPECT_EQ(p.p_min, q.p_min);
    for (int s = 0; s < kNumArms; ++s) {
      ASSERT_EQ(p.arms[size_t(s)].size(), q.arms[size_t(s)].size()) << "slot " << s;
      for (size_t j = 0; j < p.arms[size_t(s)].size(); ++j) {
        EXPECT_EQ(p.arms[size_t(s)][j].calls, q.arms[size_t(s)][j].calls);
        EXPECT_EQ(p.arms[size_t(s)][j].r, q.arms[size_t(s)][j].r);
        EXPECT_EQ(p.arms[size_t(s)][j].r_over_p, q.arms[size_t(s)][j].r_over_p);
        EXPECT_EQ(p.arms[size_t(s)][j].inv_p2, q.arms[size_t(s)][j].inv_p2);
      }
    }
  }
}

}  // namespace

// The length is L0 * 2^k, the smallest with ceil(n / L) <= max_blocks and, for auto, L^3 >= n.
TEST(LogBlocks, TheBlockLengthFollowsTheRule) {
  const std::pair<size_t, uint64_t> automatic[] = {{1, 1},  {2, 2},  {8, 2},   {9, 4},
                                                   {64, 4}, {65, 8}, {512, 8}, {513, 16}};
  for (const auto& [n, want] : automatic)
    EXPECT_EQ(log_blocks(calls_of_one_context(n), BlockRule{}).blocks[0].length, want) << n << " calls";
  // Base 1, at most 4 blocks: 10 calls -> 1 (10 blocks), 2 (5), 4 (3).
  EXPECT_EQ(log_blocks(calls_of_one_context(10), BlockRule{1, 4}).blocks[0].length, 4u);
  EXPECT_EQ(log_blocks(calls_of_one_context(4), BlockRule{1, 4}).blocks[0].length, 1u);
  // Base 3, at most 4 blocks: 13 calls -> 3 (5 blocks), 6 (3).
  EXPECT_EQ(log_blocks(calls_of_one_context(13), BlockRule{3, 4}).blocks[0].length, 6u);
  // The automatic cap: 2048 blocks; 2^19 + 1 calls need L >= 257 by the cap (L^3 >= n needs 81).
  EXPECT_EQ(log_blocks(calls_of_one_context((size_t(1) << 19) + 1), BlockRule{}).blocks[0].length, 512u);
  EXPECT_EQ(parse_block_rule("auto", "--b").base_length, 0u);
  EXPECT_EQ(parse_block_rule("7", "--b").base_length, 7u);
  for (const char* bad : {"0", "-1", "x", "", "1.5", "2000000"})
    EXPECT_THROW(parse_block_rule(bad, "--b"), UsageError) << bad;
}

// Whatever the doublings on the way, block j holds exactly calls [jL, (j + 1)L) of the context.
TEST(LogBlocks, EachBlockHoldsTheSumsOfItsCalls) {
  for (size_t n : {size_t(1), size_t(7), size_t(65), size_t(1000), size_t(4099)}) {
    const OpeData d = calls_of_one_context(n);
    for (const BlockRule rule : {BlockRule{}, BlockRule{1, 16}, BlockRule{3, 16}}) {
      const ContextBlocks b = log_blocks(d, rule).blocks[0];
      const size_t L = size_t(b.length);
      ASSERT_EQ(b.blocks(), (n + L - 1) / L) << n;
      EXPECT_EQ(b.calls, n);
      EXPECT_EQ(b.p_min, n > 1 ? 0.25 : 0.5);
      for (size_t j = 0; j < b.blocks(); ++j) {
        const size_t from = j * L, to = std::min(n, from + L);
        EXPECT_EQ(b.first_index[j], from);
        EXPECT_EQ(b.last_index[j], to - 1);
        for (int s = 0; s < 3; ++s) {
          double calls = 0, r = 0, r_over_p = 0, inv_p = 0, inv_p2 = 0, r2 = 0;
          for (size_t i = from; i < to; ++i) {
            if (int(i % 3) != s) continue;
            const double p = i % 2 ? 0.25 : 0.5, lat = double(i + 1);
            calls += 1;
            r += lat;
            r2 += lat * lat;
            r_over_p += lat / p;
            inv_p += 1 / p;
            inv_p2 += 1 / (p * p);
          }
          const auto& arm = b.arms[size_t(s)];
          if (arm.empty()) {
            EXPECT_EQ(calls, 0.0);
            continue;
          }
          EXPECT_EQ(arm[j].calls, calls) << "n " << n << " block " << j << " slot " << s;
          EXPECT_EQ(arm[j].r, r);
          EXPECT_EQ(arm[j].r2, r2);
          EXPECT_EQ(arm[j].r_over_p, r_over_p);
          EXPECT_EQ(arm[j].inv_p, inv_p);
          EXPECT_EQ(arm[j].inv_p2, inv_p2);
        }
      }
    }
  }
}

// A log read as a stream gives the blocks of the same log read whole and joined (ope_data); split
// in two files at a record boundary (a rotated log: PATH, then PATH.1 without the context record),
// the two read together give the same blocks again.
TEST(LogBlocks, AStreamGivesTheBlocksOfTheWholeLogAndRotatedSiblingsReadAsOne) {
  const std::string header = decision_log_header("policy=random\nseed=7\n");
  std::string first = header + decision_log_context(), second = header;
  for (int i = 0; i < 3000; ++i) {
    const std::string call = decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 10.0 + (i * 7919) % 13);
    (i < 1700 ? first : second) += call;
  }
  const std::string whole = write_log_bytes(first + second.substr(header.size()));
  const std::string a = write_log_bytes(first), b = write_log_bytes(second);
  const LogBlocks streamed = read_log_blocks({whole}, BlockRule{});
  expect_same_blocks(streamed, log_blocks(ope_data(read_decision_logs({whole})), BlockRule{}));
  expect_same_blocks(read_log_blocks({a, b}, BlockRule{}), streamed);
  EXPECT_EQ(streamed.blocks[0].calls, 3000u);
  // Alone, the later file has no cost table for its calls.
  EXPECT_NE(blocks_error_of({b}).find("no context record holds its cost table"), std::string::npos)
      << blocks_error_of({b});
  // In the other order the cost table comes after the calls: still read, with the same totals.
  const LogBlocks reversed = read_log_blocks({b, a}, BlockRule{});
  EXPECT_EQ(reversed.blocks[0].calls, 3000u);
  EXPECT_EQ(reversed.blocks[0].total(2).r, streamed.blocks[0].total(2).r);
}

// A file that repeats calls of another (a copy's tail) and a file whose index goes back are refused,
// naming the call; the same indices on another communicator are other calls.
TEST(LogBlocks, OverlappingFilesAndAnIndexThatGoesBackAreRefused) {
  const std::string header = decision_log_header("policy=random\nseed=7\n");
  std::string a = header + decision_log_context(), b = header;
  for (int i = 0; i < 10; ++i) a += decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 12.0);
  for (int i = 8; i < 14; ++i) b += decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 12.0);
  const std::string pa = write_log_bytes(a), pb = write_log_bytes(b);
  const std::string e = blocks_error_of({pa, pb});
  EXPECT_NE(e.find(pb + ": calls 8 to 9 of a context are logged twice (also in " + pa + ")"),
            std::string::npos)
      << e;
  std::string back = header + decision_log_context();
  for (uint64_t i : {0, 1, 2, 5, 3}) back += decision_log_call(i, 1, 1.0 / 6.0, 12.0);
  const std::string eb = blocks_error_of({write_log_bytes(back)});
  EXPECT_NE(eb.find("byte " + std::to_string(header.size() + 136 + 4 * 80) +
                    ": call 3 of its context comes after call 5"),
            std::string::npos)
      << eb;
  std::string other = header + decision_log_context();
  for (int i = 0; i < 4; ++i) {
    decision_log::CallRecord r = decision_log_call_record(uint64_t(i), 1, 1.0 / 6.0, 12.0);
    other += encoded(r);
    r.comm_hash = 0xdef;
    other += encoded(r);
  }
  EXPECT_EQ(blocks_error_of({write_log_bytes(other)}), "");
}

// 10^6 calls (80 MB) are read with far less memory than the file or its records (the whole-log
// reader keeps 64 bytes a call: 64 MB here): the blocks of one context, the reader's fixed buffer.
TEST(LogBlocks, AStreamsMemoryDoesNotGrowWithTheCalls) {
  const std::string path = temp_dir() + "/big.log";
  {
    std::ofstream out(path, std::ios::binary);
    out << decision_log_header("policy=random\nseed=7\n") << decision_log_context();
    std::string chunk;
    for (int i = 0; i < 1000000; ++i) {
      chunk += decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 10.0 + i % 5);
      if (chunk.size() > (1u << 20)) {
        out << chunk;
        chunk.clear();
      }
    }
    out << chunk;
  }
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const LogBlocks blocks = read_log_blocks({path}, BlockRule{});
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(blocks.calls, 1000000u);
  EXPECT_LE(blocks.blocks[0].blocks(), 2048u);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 16L << 10) << "KiB of peak memory more";  // 16 MiB
  std::remove(path.c_str());
}

// The intervals of the estimators: per context, resample b draws as many blocks as the context has
// from the stream (seed ^ x * 0x9e3779b97f4a7c15, b), every call of a drawn block counts, and the
// context's sums are scaled to its logged calls (its sums over its drawn calls, times n_x over the
// calls drawn); the estimates of a resample are those sums over contexts. Written out here from the
// calls.
TEST(LogBlocks, IntervalsAreThoseOfDrawingWholeBlocksPerContext) {
  OpeData d;
  d.contexts = {six_arm_context(4096), six_arm_context(8192)};
  int next[2] = {0, 0};
  for (int i = 0; i < 700; ++i) {
    const int x = i % 3 == 0 ? 1 : 0;  // 234 and 466 calls
    const int slot = (next[x]++ * 5) % 6;
    d.calls.push_back({x, slot, slot == 2 ? 0.5 : 0.1, 10.0 + (i * 37) % 17 + 3 * x, uint64_t(i)});
  }
  const LogBlocks blocks = log_blocks(d, BlockRule{});
  TargetProbabilities pi(2);
  for (auto& p : pi) p.assign(kNumArms, 0.0);
  pi[0][2] = 1.0;
  pi[1][2] = 0.5;
  pi[1][3] = 0.5;
  const OpeOptions options{301, 11, 0.9, 2};
  const auto got = estimate_off_policy(blocks, pi, "t", options);
  // The calls of each context in order, and the plain resamples.
  std::vector<std::vector<OpeCall>> calls(2);
  for (const OpeCall& c : d.calls) calls[size_t(c.context)].push_back(c);
  std::vector<double> ips, snips;
  for (int b = 0; b < options.resamples; ++b) {
    double swr = 0, sw = 0, n = 0;
    for (size_t x = 0; x < 2; ++x) {
      const uint64_t L = blocks.blocks[x].length;
      const uint32_t m = uint32_t((calls[x].size() + L - 1) / L);
      ResampleStream rs(options.seed ^ (uint64_t(x) * 0x9e3779b97f4a7c15ull), uint64_t(b),
                        ResamplePurpose::bootstrap_indices);
      double cwr = 0, cw = 0, drawn = 0;
      for (uint32_t k = 0; k < m; ++k) {
        const size_t j = rs.next_below(m);
        for (size_t i = j * L; i < std::min(calls[x].size(), size_t((j + 1) * L)); ++i) {
          const OpeCall& c = calls[x][i];
          const double w = pi[x][size_t(c.arm)] / c.propensity;
          cw += w;
          cwr += w * c.latency_us;
          drawn += 1;
        }
      }
      const double scale = double(calls[x].size()) / drawn;
      sw += cw * scale;
      swr += cwr * scale;
      n += double(calls[x].size());
    }
    ips.push_back(swr / n);
    snips.push_back(swr / sw);
  }
  const double a = (1.0 - options.level) / 2.0;
  EXPECT_EQ(blocks.blocks[0].length, 8u);  // 466 calls: 8^3 >= 466 > 4^3
  EXPECT_NEAR(got[0].lo, ncclbot::test::numpy_linear_quantile(ips, a), 1e-9 * got[0].value_us);
  EXPECT_NEAR(got[0].hi, ncclbot::test::numpy_linear_quantile(ips, 1 - a), 1e-9 * got[0].value_us);
  EXPECT_NEAR(got[1].lo, ncclbot::test::numpy_linear_quantile(snips, a), 1e-9 * got[1].value_us);
  EXPECT_NEAR(got[1].hi, ncclbot::test::numpy_linear_quantile(snips, 1 - a), 1e-9 * got[1].value_us);
  EXPECT_LT(got[0].lo, got[0].hi);
  // Threads change nothing.
  const auto one = estimate_off_policy(blocks, pi, "t", OpeOptions{301, 11, 0.9, 1});
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(one[k].lo, got[k].lo);
    EXPECT_EQ(one[k].hi, got[k].hi);
  }
}

// CUDA-graph replays in a log (format version 2's flag) are no decisions of the behaviour's: the
// blocks, the estimators and the replay method's second pass all leave them out and count them, so a
// log with replays among its calls gives the numbers of the same log without them.
TEST(LogBlocks, GraphReplaysAreLeftOutEverywhere) {
  const std::string header = decision_log_header("policy=random\nseed=7\n");
  std::string plain = header + decision_log_context(), with = plain;
  for (int i = 0; i < 600; ++i) {
    const std::string call = decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 10.0 + (i * 7919) % 13);
    plain += call;
    with += call;
    if (i % 5 == 0) {
      decision_log::CallRecord r = decision_log_call_record(UINT64_MAX, 2, NAN, 99.0);
      r.graph_replay = true;
      r.nccl_slot = -1;
      with += encoded(r);
    }
  }
  const std::string a = write_log_bytes(plain), b = write_log_bytes(with);
  const LogBlocks pa = read_log_blocks({a}, BlockRule{}), pb = read_log_blocks({b}, BlockRule{});
  expect_same_blocks(pa, pb);
  EXPECT_EQ(pa.graph_replays, 0u);
  EXPECT_EQ(pb.graph_replays, 120u);
  EXPECT_EQ(ope_data(read_decision_logs({b})).graph_replays, 120u);
  const PolicySpec spec = parse_policy_spec("ucb1:c=0.1,n0=1");
  const auto ra = replay_methods({a}, pa, {spec}, 3, 0.95), rb = replay_methods({b}, pb, {spec}, 3, 0.95);
  ASSERT_TRUE(ra[0].result && rb[0].result) << ra[0].unavailable << rb[0].unavailable;
  EXPECT_EQ(ra[0].result->value_us, rb[0].result->value_us);
  EXPECT_EQ(ra[0].result->accepted, rb[0].result->accepted);
}
