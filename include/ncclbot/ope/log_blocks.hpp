#pragma once
// A decision log as blocks of sufficient statistics (docs/ope.md): per logged context, its calls in
// log order (time order) cut into consecutive blocks, and per block and arm played the sums every
// estimator needs, so that everything after the reader works on blocks and memory grows with
// contexts x blocks, never with calls:
//   calls, sum 1/p, sum r/p, sum 1/p^2, sum r, sum r^2     (p the logged propensity, r the latency)
// A stationary target's importance weight of a call is w = pi(a | x) / p, so its IPS, SNIPS and DR
// sums over a block, its weights' squares, the reward model (logged means) and telemetry's saving
// against NCCL's pick are all linear in these.
//
// The block length of a context with n calls (BlockRule): L = L0 * 2^k, the smallest such that the
// context has at most max_blocks blocks (ceil(n / L) <= max_blocks) and, with the automatic rule
// (L0 = 1), L^3 >= n: blocks of about the cube root of the calls (the order of the block length
// that is best for the block bootstrap of a mean, Hall, Horowitz and Jing 1995, Biometrika 82(3)),
// rounded up to a power of two so that a pass can double it as calls arrive by merging neighbouring
// blocks. L depends only on n and the rule, never on how the calls were read. A fixed L0 = 1 makes
// every block one call (the call-level bootstrap) as long as the cap allows.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/ope/off_policy.hpp"

namespace ncclbot {

struct ArmSums {
  double calls = 0, inv_p = 0, r_over_p = 0, inv_p2 = 0, r = 0, r2 = 0;
  void add(double p, double latency_us) {
    const double inv = 1.0 / p;
    calls += 1.0;
    inv_p += inv;
    r_over_p += latency_us * inv;
    inv_p2 += inv * inv;
    r += latency_us;
    r2 += latency_us * latency_us;
  }
  void merge(const ArmSums& o) {
    calls += o.calls;
    inv_p += o.inv_p;
    r_over_p += o.r_over_p;
    inv_p2 += o.inv_p2;
    r += o.r;
    r2 += o.r2;
  }
};

struct BlockRule {
  uint32_t base_length = 0;      // L0; 0 = the automatic rule (L0 = 1 and L^3 >= n)
  uint32_t max_blocks = 2048;    // per context
  std::string text() const;      // "auto" or the base length
  std::string describe() const;  // the rule in words
};

// "auto" or a whole number of calls in [1, 2^20]; UsageError naming `option` otherwise.
BlockRule parse_block_rule(const std::string& text, const std::string& option);

struct ContextBlocks {
  uint64_t calls = 0;
  uint64_t length = 1;                            // calls per block; the last may hold fewer
  std::vector<uint64_t> first_index, last_index;  // call index of each block's first and last call
  // [arm][block], by arm index among the log's arms (LogBlocks::arms); empty for an arm never played.
  std::vector<std::vector<ArmSums>> arms;
  double p_min = 1.0;  // the smallest propensity logged here
  size_t blocks() const { return first_index.size(); }
  bool played(int arm) const { return !arms[size_t(arm)].empty(); }
  ArmSums total(int arm) const;   // over every block
  ArmSums block(size_t j) const;  // over every arm
};

struct LogBlocks {
  std::vector<OpeContext> contexts;      // first seen first
  std::vector<ContextBlocks> blocks;     // per context
  LoggedArms arms = slot_logged_arms();  // what ContextBlocks::arms indexes
  std::string behaviour;
  uint64_t calls = 0;
  uint64_t graph_replays = 0;  // logged CUDA-graph replays, left out: no decision of the behaviour's
  uint64_t knob_calls = 0;     // knob call records (version 4) among `calls`
  BlockRule rule;
  // Where the log came from, for messages and output.
  std::vector<DecisionLogFile> files;
};

// Feeds calls into blocks, in the order given, by the rule.
class BlockBuilder {
 public:
  explicit BlockBuilder(BlockRule rule) : rule_(rule) {}
  // The arms calls are counted by, before the first context.
  void set_arms(LoggedArms arms) { out_.arms = std::move(arms); }
  const LoggedArms& arms() const { return out_.arms; }
  // A new context; returns its index.
  int add_context(const OpeContext& c);
  // Context `context`'s cost table, when it comes after its first calls (a later file's record).
  void set_context(int context, const OpeContext& c);
  const OpeContext& context(int context) const { return out_.contexts[size_t(context)]; }
  bool played(int context, int arm) const { return out_.blocks[size_t(context)].played(arm); }
  void count_graph_replay();
  // `arm` indexes the arms; `knob_call` counts the call among LogBlocks::knob_calls.
  void add_call(int context, int arm, double propensity, double latency_us, uint64_t index,
                bool knob_call = false);
  LogBlocks finish(std::string behaviour);

 private:
  void lengthen_if_needed(ContextBlocks& b);
  BlockRule rule_;
  LogBlocks out_;
};

// The blocks of data already in memory (its calls in their order).
LogBlocks log_blocks(const OpeData& data, BlockRule rule);

// The blocks of decision logs read in one sequential pass (log/decision_log_stream.hpp), every
// call checked as ope_data() checks it, with the same errors naming the file and byte.
LogBlocks read_log_blocks(const std::vector<std::string>& paths, BlockRule rule);

// Each logged context's index by its key (collective, bytes, nodes, ranks).
class ContextIndex {
 public:
  ContextIndex() = default;
  explicit ContextIndex(const std::vector<OpeContext>& contexts);
  int find(int collective, uint64_t bytes, uint32_t nodes, uint32_t ranks) const;  // -1 when absent
  int add(int collective, uint64_t bytes, uint32_t nodes, uint32_t ranks);         // the next index

 private:
  struct Key {
    uint64_t bytes;
    int collective;
    uint32_t nodes, ranks;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  std::unordered_map<Key, int, KeyHash> index_;
};

}  // namespace ncclbot
