#include "ncclbot/ope/log_blocks.hpp"

#include <algorithm>
#include <optional>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log_stream.hpp"

namespace ncclbot {

std::string BlockRule::text() const {
  return base_length == 0 ? "auto" : std::to_string(base_length);
}

std::string BlockRule::describe() const {
  const std::string cap = "at most " + std::to_string(max_blocks) + " blocks per context";
  return base_length == 0
             ? "consecutive calls in blocks of the smallest power of two at least the cube root of "
               "the context's calls, " +
                   cap
             : "consecutive calls in blocks of " + std::to_string(base_length) + " calls, doubled until " +
                   cap;
}

BlockRule parse_block_rule(const std::string& text, const std::string& option) {
  BlockRule rule;
  if (text == "auto") return rule;
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-' || v < 1 || v > (1u << 20))
    throw UsageError(option + " must be auto or a whole number of calls in [1, 1048576], not '" + text + "'");
  rule.base_length = uint32_t(v);
  return rule;
}

ArmSums ContextBlocks::total(int arm) const {
  ArmSums t;
  for (const ArmSums& a : arms[size_t(arm)]) t.merge(a);
  return t;
}

ArmSums ContextBlocks::block(size_t j) const {
  ArmSums t;
  for (const auto& v : arms)
    if (!v.empty()) t.merge(v[j]);
  return t;
}

size_t ContextIndex::KeyHash::operator()(const Key& k) const {
  uint64_t h = k.bytes * 0x9e3779b97f4a7c15ull ^ (uint64_t(uint32_t(k.collective)) << 48) ^
               (uint64_t(k.nodes) << 24) ^ k.ranks;
  h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
  return size_t(h ^ (h >> 29));
}

ContextIndex::ContextIndex(const std::vector<OpeContext>& contexts) {
  for (const OpeContext& c : contexts) add(c.collective, c.bytes, c.nodes, c.ranks);
}

int ContextIndex::find(int collective, uint64_t bytes, uint32_t nodes, uint32_t ranks) const {
  const auto it = index_.find(Key{bytes, collective, nodes, ranks});
  return it == index_.end() ? -1 : it->second;
}

int ContextIndex::add(int collective, uint64_t bytes, uint32_t nodes, uint32_t ranks) {
  return index_.emplace(Key{bytes, collective, nodes, ranks}, int(index_.size())).first->second;
}

void BlockBuilder::count_graph_replay() {
  ++out_.graph_replays;
}

void BlockBuilder::set_context(int context, const OpeContext& c) {
  out_.contexts[size_t(context)] = c;
}

int BlockBuilder::add_context(const OpeContext& c) {
  out_.contexts.push_back(c);
  ContextBlocks& b = out_.blocks.emplace_back();
  b.length = rule_.base_length > 0 ? rule_.base_length : 1;
  b.arms.resize(out_.arms.size());
  return int(out_.contexts.size()) - 1;
}

void BlockBuilder::add_call(int context, int arm, double propensity, double latency_us, uint64_t index,
                            bool knob_call) {
  ContextBlocks& b = out_.blocks[size_t(context)];
  const size_t j = size_t(b.calls / b.length);
  if (j == b.blocks()) {
    b.first_index.push_back(index);
    b.last_index.push_back(index);
    for (auto& v : b.arms)
      if (!v.empty()) v.emplace_back();
  }
  auto& sums = b.arms[size_t(arm)];
  if (sums.empty()) sums.resize(b.blocks());
  sums[j].add(propensity, latency_us);
  b.last_index[j] = index;
  b.p_min = std::min(b.p_min, propensity);
  ++b.calls;
  ++out_.calls;
  out_.knob_calls += knob_call;
  lengthen_if_needed(b);
}

// Doubles the block length, merging neighbouring blocks (2k and 2k + 1 into k), until the rule
// holds for the calls so far: block k then covers calls [kL, (k + 1)L) as it would had the length
// been L from the start.
void BlockBuilder::lengthen_if_needed(ContextBlocks& b) {
  while (true) {
    const uint64_t blocks = (b.calls + b.length - 1) / b.length;
    const bool too_short =
        rule_.base_length == 0 && b.length < (uint64_t(1) << 21) && b.length * b.length * b.length < b.calls;
    if (blocks <= rule_.max_blocks && !too_short) return;
    const size_t n = b.blocks(), m = (n + 1) / 2;
    for (size_t k = 0; k < m; ++k) {
      b.first_index[k] = b.first_index[2 * k];
      b.last_index[k] = b.last_index[std::min(2 * k + 1, n - 1)];
    }
    b.first_index.resize(m);
    b.last_index.resize(m);
    for (auto& v : b.arms) {
      if (v.empty()) continue;
      for (size_t k = 0; k < m; ++k) {
        ArmSums s = v[2 * k];
        if (2 * k + 1 < n) s.merge(v[2 * k + 1]);
        v[k] = s;
      }
      v.resize(m);
    }
    b.length *= 2;
  }
}

LogBlocks BlockBuilder::finish(std::string behaviour) {
  out_.behaviour = std::move(behaviour);
  out_.rule = rule_;
  return std::move(out_);
}

LogBlocks log_blocks(const OpeData& data, BlockRule rule) {
  BlockBuilder builder(rule);
  builder.set_arms(data.arms);
  for (const OpeContext& c : data.contexts) builder.add_context(c);
  for (const OpeCall& c : data.calls) builder.add_call(c.context, c.arm, c.propensity, c.latency_us, c.index);
  for (uint64_t k = 0; k < data.graph_replays; ++k) builder.count_graph_replay();
  return builder.finish(data.behaviour);
}

namespace {

// A call's place, kept for an error found only at the end of the pass.
struct CallPlace {
  std::string path;
  uint64_t offset = 0;
  decision_log::CallRecord record;
};

// Builds the blocks as the records come, checking each call as ope_data() does. Two checks need the
// context's cost table, which a later file may hold: that the call's context has one, and that the
// arm it played is usable there; the first call that could fail each is kept and they are made at
// the end.
class BlockSink final : public DecisionLogSink {
 public:
  explicit BlockSink(BlockRule rule) : builder_(rule) {}

  void file(const DecisionLogFile& f, const std::string& policy) override {
    policy_ = policy;
    if (first_file_)
      builder_.set_arms(logged_arms(f));
    else
      check_same_arms(builder_.arms(), f);
    first_file_ = false;
  }

  void context(const decision_log::ContextRecord& r, const std::string&, uint64_t) override {
    const int x = index_.find(r.collective, r.bytes, r.nodes, r.ranks);
    if (x < 0) {
      index_.add(r.collective, r.bytes, r.nodes, r.ranks);
      builder_.add_context(ope_context(r));
      checks_.emplace_back().has_record = true;
    } else if (!checks_[size_t(x)].has_record) {
      builder_.set_context(x, ope_context(r));
      checks_[size_t(x)].has_record = true;
    }
  }

  void call(const decision_log::CallRecord& r, const std::string& path, uint64_t offset) override {
    if (r.graph_replay) {  // no decision of the behaviour's: no estimator takes it
      builder_.count_graph_replay();
      return;
    }
    if (!ope_call_usable(r))
      throw InputError(path, 0, ope_call_message(r, offset, ope_call_problem(r, policy_)));
    int x = index_.find(r.collective, r.bytes, r.nodes, r.ranks);
    if (x < 0) {
      x = index_.add(r.collective, r.bytes, r.nodes, r.ranks);
      OpeContext c;  // its cost table is still to come
      c.collective = r.collective;
      c.bytes = r.bytes;
      c.nodes = r.nodes;
      c.ranks = r.ranks;
      for (float& v : c.cost_us) v = -1.0f;
      builder_.add_context(c);
      checks_.emplace_back().first_call = CallPlace{path, offset, r};
    }
    const int arm = builder_.arms().index(call_arm(r));
    if (arm < 0) fail(CallPlace{path, offset, r}, ope_arm_problem(builder_.arms(), arm, builder_.context(x)));
    Checks& check = checks_[size_t(x)];
    if (!builder_.played(x, arm)) check.first_of_arm.emplace_back(arm, CallPlace{path, offset, r});
    builder_.add_call(x, arm, r.propensity, r.latency_us, r.call_index, r.knobs);
  }

  LogBlocks finish(DecisionLogSummary summary) {
    for (size_t x = 0; x < checks_.size(); ++x) {
      Checks& check = checks_[x];
      if (!check.has_record) fail(*check.first_call, "no context record holds its cost table");
      std::sort(check.first_of_arm.begin(), check.first_of_arm.end(),  // the lowest arm's error first
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [arm, place] : check.first_of_arm)
        if (const std::string why = ope_arm_problem(builder_.arms(), arm, builder_.context(int(x)));
            !why.empty())
          fail(place, why);
    }
    LogBlocks out = builder_.finish(summary.policy);
    out.files = std::move(summary.files);
    if (out.calls == 0) {
      const size_t skipped = skipped_latencies(out.files), overridden = overridden_calls(out.files);
      throw InputError(
          out.files.empty() ? std::string() : out.files.front().path, 0,
          "the logs hold no measured call" +
              (skipped ? " (" + skipped_latencies_text(skipped) + ")" : std::string()) +
              (overridden ? " (" + overridden_calls_text(overridden, symmetric_calls(out.files)) + ")"
                          : std::string()));
    }
    return out;
  }

 private:
  struct Checks {
    bool has_record = false;
    std::optional<CallPlace> first_call;                  // of a context without a record yet
    std::vector<std::pair<int, CallPlace>> first_of_arm;  // each arm's first call, by arm index
  };
  [[noreturn]] void fail(const CallPlace& at, const std::string& why) const {
    throw InputError(at.path, 0, ope_call_message(at.record, at.offset, why));
  }

  BlockBuilder builder_;
  ContextIndex index_;
  std::vector<Checks> checks_;
  std::string policy_;
  bool first_file_ = true;
};

}  // namespace

LogBlocks read_log_blocks(const std::vector<std::string>& paths, BlockRule rule) {
  BlockSink sink(rule);
  DecisionLogSummary summary = stream_decision_logs(paths, sink);
  return sink.finish(std::move(summary));
}

}  // namespace ncclbot
