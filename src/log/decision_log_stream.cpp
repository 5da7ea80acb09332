#include "ncclbot/log/decision_log_stream.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_limits.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {
namespace {

constexpr uint64_t kMaxLogBytes = uint64_t(64) << 30;
constexpr size_t kBufferBytes = size_t(1) << 20;

[[noreturn]] void fail_at(const std::string& path, uint64_t offset, const std::string& reason) {
  throw InputError(path, 0, "byte " + std::to_string(offset) + ": " + reason);
}

// A decision log opened for reading (InputFile): a regular file only, since a FIFO or a device
// would block or never end, read through a fixed buffer, so memory stays bounded whatever the file
// holds. Hands out whole records in place.
class LogInput {
 public:
  explicit LogInput(const std::string& path) : file_(path, kMaxLogBytes, false), buffer_(kBufferBytes) {}

  // The next n bytes (n <= kBufferBytes), valid until the next call; fewer (got < n) only at the
  // end of the file, where they are what is left.
  const unsigned char* take(size_t n, size_t* got) {
    const unsigned char* p = window(n, got);
    *got = std::min(n, *got);
    advance(*got);
    return p;
  }
  // At least n bytes from the current one (n <= kBufferBytes), fewer only at the end of the file;
  // *got says how many. Valid until the next call of window() or take().
  const unsigned char* window(size_t n, size_t* got) {
    if (end_ - at_ < n) refill();
    *got = end_ - at_;
    return buffer_.data() + at_;
  }
  void advance(size_t n) {
    at_ += n;
    offset_ += n;
  }
  uint64_t offset() const { return offset_; }  // bytes handed out so far
  std::pair<uint64_t, uint64_t> identity() const { return file_.identity(); }

 private:
  void refill() {
    std::memmove(buffer_.data(), buffer_.data() + at_, end_ - at_);
    end_ -= at_;
    at_ = 0;
    while (end_ < buffer_.size()) {
      file_.stream().read(reinterpret_cast<char*>(buffer_.data() + end_),
                          std::streamsize(buffer_.size() - end_));
      const size_t got = size_t(file_.stream().gcount());
      if (got == 0) break;
      end_ += got;
    }
  }

  InputFile file_;
  std::vector<unsigned char> buffer_;
  size_t at_ = 0, end_ = 0;
  uint64_t offset_ = 0;
};

// What no plugin writes (the checksum holds, so a foreign or crafted file): "" when the fields are
// in range.
std::string shape_problem(int collective, int nccl_slot, uint32_t nodes, uint32_t ranks) {
  if (collective < 0 || collective >= kNumCollectives)
    return "collective " + std::to_string(collective) + " is no ncclFunc_t";
  if (nccl_slot < -1 || nccl_slot >= kNumNcclArms)
    return "NCCL's pick " + std::to_string(nccl_slot) + " is no arm";
  if (nodes < 1 || ranks < nodes || ranks > (1u << 24))
    return std::to_string(nodes) + " nodes and " + std::to_string(ranks) + " ranks is no communicator";
  return "";
}

// Whether call_problem(r) is "", without building it.
// A symmetric kernel (version 5) ran no arm of the table: slot -1.
bool slot_fits(const decision_log::CallRecord& r) {
  return r.symmetric ? r.slot == -1 : r.slot >= 0 && r.slot < kNumNcclArms;
}

bool call_fits(const decision_log::CallRecord& r) {
  return r.collective >= 0 && r.collective < kNumCollectives && r.nccl_slot >= -1 &&
         r.nccl_slot < kNumNcclArms && r.nodes >= 1 && r.ranks >= r.nodes && r.ranks <= (1u << 24) &&
         slot_fits(r);
}

std::string call_problem(const decision_log::CallRecord& r) {
  if (std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty()) return bad;
  if (!slot_fits(r))
    return "the arm that ran, " + std::to_string(r.slot) + ", is no arm" +
           (r.symmetric ? " a symmetric-kernel call names (-1)" : "");
  return "";
}

// The header's key=value lines; a line that is not one, or a key given twice, is an error.
std::map<std::string, std::string> parse_header(const std::string& path, const std::string& text) {
  std::map<std::string, std::string> header;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '\0') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) fail_at(path, 16, "header line '" + line + "' is not key=value");
    if (!header.emplace(line.substr(0, eq), line.substr(eq + 1)).second)
      fail_at(path, 16, "header key '" + line.substr(0, eq) + "' appears twice");
  }
  return header;
}

std::string header_value(const DecisionLogFile& file, const char* key) {
  const auto it = file.header.find(key);
  return it == file.header.end() ? std::string() : it->second;
}

// The probabilities the header's policy can give: 1 for a deterministic policy, 1/K for `random`,
// eps/K or eps/K + 1 - eps for epsilon-greedy without decay, for a whole number of arms K in 1..21
// (the context's arms as the policy saw them, which in leader mode the ranks' tables decide, not
// the logged one), in 1..kKnobReplayArms for a knob log (its header's `knobs` line); any for Thompson
// sampling and decaying epsilon-greedy. A record with another sits under a header of another policy.
class PolicyProbabilities {
 public:
  PolicyProbabilities(const std::string& policy, const std::string& path, int max_arms) {
    PolicySpec spec;
    try {
      spec = parse_policy_spec(policy);
    } catch (const std::exception&) {
      throw InputError(path, 0, "the header's policy '" + policy + "' is no policy spec");
    }
    const bool deterministic = visit_policy(
        spec.config, [](auto& p) { return std::remove_reference_t<decltype(p)>::kDeterministic; });
    const PolicyKind kind = spec.config.kind;
    const bool fixed_eps = kind == PolicyKind::kEpsGreedy && spec.config.decay == 0.0;
    any_ = !deterministic && kind != PolicyKind::kRandom && !fixed_eps;
    const double e = spec.config.eps;
    if (deterministic) allowed_.push_back(1.0);
    for (int k = 1; k <= max_arms && !deterministic && !any_; ++k) {
      if (kind == PolicyKind::kRandom) {
        allowed_.push_back(1.0 / double(k));
      } else {
        allowed_.push_back(e / double(k));
        allowed_.push_back(e / double(k) + (1.0 - e));
      }
    }
  }

  // Whether every probability of the policy is stated (a version-1 log of Thompson sampling or
  // decaying epsilon-greedy may say NaN for its own choices).
  bool states_each() const { return !any_; }

  bool possible(double p) {
    if (any_ || p == last_) return true;  // NaN never equals: a NaN is checked, and refused, each time
    for (double a : allowed_)
      if (p == a) {
        last_ = p;
        return true;
      }
    return false;
  }

 private:
  bool any_ = false;
  std::vector<double> allowed_;
  double last_ = NAN;
};

// Every call of a context is logged once. Within a file a communicator's calls of a context come in
// call order, so their indices must rise; across files, the ranges they span must not overlap. One
// range per (communicator, context) and file: memory grows with those, not with the calls.
class CallsOnce {
 public:
  struct Range {
    uint64_t first = 0, last = 0, last_offset = 0;
  };

  void call(const decision_log::CallRecord& r, const std::string& path, uint64_t offset) {
    const Key key{r.comm_hash, r.bytes, r.collective, r.nodes, r.ranks};
    const auto [it, fresh] = file_.try_emplace(key, Range{r.call_index, r.call_index, offset});
    if (fresh) return;
    Range& range = it->second;
    if (r.call_index == range.last)
      fail_at(path, offset,
              "call " + std::to_string(r.call_index) + " of its context is logged twice (also at byte " +
                  std::to_string(range.last_offset) + " of " + path + ")");
    if (r.call_index < range.last)
      fail_at(path, offset,
              "call " + std::to_string(r.call_index) + " of its context comes after call " +
                  std::to_string(range.last) + " (byte " + std::to_string(range.last_offset) +
                  "): the plugin logs each context's calls in order, so this one is logged twice or the "
                  "file is spliced");
    range.last = r.call_index;
    range.last_offset = offset;
  }

  // At the end of file `path`: its ranges against those of the files before it.
  void end_file(const std::string& path) {
    for (const auto& [key, range] : file_) {
      auto& before = files_[key];
      for (const auto& [other, seen] : before)
        if (range.first <= seen.last && seen.first <= range.last)
          throw InputError(path, 0,
                           "calls " + std::to_string(std::max(range.first, seen.first)) + " to " +
                               std::to_string(std::min(range.last, seen.last)) +
                               " of a context are logged twice (also in " + other + ")");
      before.emplace_back(path, range);
    }
    file_.clear();
  }

 private:
  struct Key {
    uint64_t comm, bytes;
    int collective;
    uint32_t nodes, ranks;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.comm * 0x9e3779b97f4a7c15ull ^ k.bytes;
      h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull ^ (uint64_t(k.collective) << 40 | k.nodes) ^
          (uint64_t(k.ranks) << 20);
      return size_t(h ^ (h >> 32));
    }
  };
  std::unordered_map<Key, Range, KeyHash> file_;
  std::unordered_map<Key, std::vector<std::pair<std::string, Range>>, KeyHash> files_;
};

// Each context is described once: a later record of the same (collective, bytes, nodes, ranks),
// another communicator of that shape for one, must repeat its cost table and NCCL's pick, or which
// of them prices NCCL's choice would depend on the order of the records.
class ContextsOnce {
 public:
  void context(const decision_log::ContextRecord& r, const std::string& path, uint64_t offset) {
    const auto [it, fresh] =
        first_.try_emplace(Key{r.bytes, r.collective, r.nodes, r.ranks}, First{r, path, offset});
    const First& first = it->second;
    if (fresh || (first.record.nccl_slot == r.nccl_slot &&
                  std::memcmp(first.record.cost_us, r.cost_us, sizeof r.cost_us) == 0))
      return;
    fail_at(path, offset,
            "a second, different record of context " +
                std::string(collective_name(Collective(r.collective))) + " " + std::to_string(r.bytes) +
                " B on " + std::to_string(r.nodes) + " nodes x " + std::to_string(r.ranks) +
                " ranks (the first is at byte " + std::to_string(first.offset) + " of " + first.path +
                "): NCCL's pick or cost table differs between them");
  }

 private:
  using Key = std::tuple<uint64_t, int, uint32_t, uint32_t>;
  struct First {
    decision_log::ContextRecord record;
    std::string path;
    uint64_t offset;
  };
  std::map<Key, First> first_;
};

DecisionLogFile read_header(LogInput& in, const std::string& path) {
  using namespace decision_log;
  DecisionLogFile file;
  file.path = path;
  size_t got = 0;
  const unsigned char* head = in.take(16, &got);
  if (got < 16 || std::memcmp(head, kMagic, 8) != 0)
    throw InputError(path, 0, "not an ncclbot decision log (no NCBTLOG header; a truncated file?)");
  const uint32_t version = decision_log::detail::get<uint32_t>(head, 8);
  if (version < kOldestDecisionLogVersion || version > kDecisionLogVersion)
    throw InputError(path, 0,
                     "decision log version " + std::to_string(version) + ", this ncclbot reads versions " +
                         std::to_string(kOldestDecisionLogVersion) + " to " +
                         std::to_string(kDecisionLogVersion));
  const uint32_t header_bytes = decision_log::detail::get<uint32_t>(head, 12);
  if (header_bytes < 16 || header_bytes % 8 != 0 || header_bytes > kMaxHeaderBytes)
    throw InputError(path, 0,
                     "the header is damaged or truncated (says " + std::to_string(header_bytes) + " bytes)");
  const unsigned char* text = in.take(header_bytes - 16, &got);
  if (got < header_bytes - 16)
    throw InputError(path, 0,
                     "the header is damaged or truncated (says " + std::to_string(header_bytes) + " bytes)");
  file.header = parse_header(path, std::string(reinterpret_cast<const char*>(text), got));
  file.version = version;
  return file;
}

// Whether each of `count` records at `at[i]` (of the sizes their headers say, each a format's
// record size) carries its own checksum. FNV-1a is one long chain of dependent multiplications per
// record, so four records of one size are hashed side by side, their chains interleaved.
void check_sums(const unsigned char* const* at, const uint32_t* size, size_t count, bool* ok) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const uint32_t n = size[i];
    if (size[i + 1] != n || size[i + 2] != n || size[i + 3] != n) {
      for (size_t k = i; k < i + 4; ++k) ok[k] = decision_log::intact(at[k], size[k]);
      continue;
    }
    uint64_t h[4] = {0xcbf29ce484222325ull, 0xcbf29ce484222325ull, 0xcbf29ce484222325ull,
                     0xcbf29ce484222325ull};
    for (uint32_t b = 0; b < n - 8; ++b)
      for (size_t k = 0; k < 4; ++k) h[k] = (h[k] ^ at[i + k][b]) * 0x100000001b3ull;
    for (size_t k = 0; k < 4; ++k) ok[i + k] = decision_log::detail::get<uint64_t>(at[i + k], n - 8) == h[k];
  }
  for (; i < count; ++i) ok[i] = decision_log::intact(at[i], size[i]);
}

// Whether call `r` is one on which NCCL ran another arm than the decided one (docs/ope.md "Calls
// NCCL ran otherwise"): left out of the estimates and counted. Version 3 flags it and names the arm
// decided, with the decision's probability; versions 1 and 2 wrote NaN for its probability, which a
// version-2 log (every policy stating its probabilities by then) has for no other call, nor a
// version-1 log of a policy that always stated them.
bool overridden_call(const decision_log::CallRecord& r, const DecisionLogFile& file,
                     PolicyProbabilities& probabilities, const std::string& path, uint64_t offset) {
  if (!r.overridden)
    return file.version < 3 && std::isnan(r.propensity) && (file.version == 2 || probabilities.states_each());
  if (file.version < 3)
    fail_at(path, offset,
            "a flag of version 3 in a version-" + std::to_string(file.version) + " log (damaged?)");
  const bool same_knobs = r.decided_channels == r.channels && r.decided_chunk_bytes == r.chunk_bytes;
  if (r.decided_slot < 0 || r.decided_slot >= kNumNcclArms || (r.decided_slot == r.slot && same_knobs))
    fail_at(path, offset,
            "the arm decided, " + std::to_string(r.decided_slot) + ", is no arm or the one that ran");
  if (!probabilities.possible(r.propensity)) {
    std::ostringstream v;
    v.precision(17);
    v << r.propensity;
    fail_at(path, offset,
            "probability " + v.str() + " of the decision is none that the header's policy gives");
  }
  return true;
}

// A knob call record (kind 3) is one of a version-4 log whose header gives the knob lists, with a
// channel count NCCL can run and no decided arm unless NCCL overrode it.
void check_knob_call(const decision_log::CallRecord& r, DecisionLogFile& file, const std::string& path,
                     uint64_t offset) {
  if (file.version < 4)
    fail_at(path, offset,
            "a knob call record in a version-" + std::to_string(file.version) + " log (damaged?)");
  if (!file.header.count("knobs"))
    fail_at(path, offset, "a knob call record under a header without a `knobs` line (damaged?)");
  if (r.channels > kMaxChannels || r.decided_channels > kMaxChannels)
    fail_at(path, offset,
            "channels " + std::to_string(std::max(r.channels, r.decided_channels)) +
                " is more than NCCL runs (" + std::to_string(kMaxChannels) + ")");
  if (!r.overridden && !r.symmetric && (r.decided_channels != 0 || r.decided_chunk_bytes != 0))
    fail_at(path, offset, "a decided arm's knobs on a call NCCL ran as decided (damaged?)");
  ++file.knob_calls;
}

// Checks and passes on one call record (its checksum already verified) at byte `offset` of the file.
void read_call_record(const unsigned char* record, uint64_t offset, DecisionLogFile& file,
                      PolicyProbabilities& probabilities, const std::string& policy, CallsOnce& once,
                      DecisionLogSink& sink) {
  using namespace decision_log;
  const std::string& path = file.path;
  const CallRecord r = decode_call(record);
  if (!call_fits(r)) fail_at(path, offset, call_problem(r));
  if (r.knobs) check_knob_call(r, file, path, offset);
  // A latency no collective has (a wrapped profiler timer, a reported 1e300) is no measurement:
  // that call is skipped and counted, the log's other calls still count.
  const bool measured = latency_measurable(r.latency_us);
  if (r.graph_replay) {  // no decision: no probability, no call index of its own
    if (file.version < 2) fail_at(path, offset, "a flags byte in a version-1 log (damaged?)");
    if (!measured) {
      ++file.skipped_latencies;
      return;
    }
    sink.call(r, path, offset);
    ++file.calls;
    ++file.graph_replays;
    return;
  }
  if (r.symmetric) {
    // NCCL ran one of its symmetric kernels (version 5): no arm's latency; left out and counted.
    if (file.version < 5)
      fail_at(path, offset,
              "a flag of version 5 in a version-" + std::to_string(file.version) + " log (damaged?)");
    if (r.overridden || r.graph_replay || r.decided_slot < -1 || r.decided_slot >= kNumNcclArms)
      fail_at(path, offset, "a symmetric-kernel call with another flag or no arm decided (damaged?)");
    if (!probabilities.possible(r.propensity))
      fail_at(path, offset, "the probability of the decision is none that the header's policy gives");
    once.call(r, path, offset);
    ++file.overridden;
    ++file.symmetric;
    return;
  }
  if (overridden_call(r, file, probabilities, path, offset)) {
    if (r.call_index != UINT64_MAX) once.call(r, path, offset);
    ++file.overridden;
    return;
  }
  if (!probabilities.possible(r.propensity)) {
    std::ostringstream v;
    v.precision(17);
    v << r.propensity;
    fail_at(path, offset,
            "probability " + v.str() + " is none that the header's policy '" + policy +
                "' gives (a header over another policy's records?)");
  }
  once.call(r, path, offset);
  if (!measured) {
    ++file.skipped_latencies;
    return;
  }
  sink.call(r, path, offset);
  ++file.calls;
}

void read_records(LogInput& in, DecisionLogFile& file, PolicyProbabilities& probabilities,
                  const std::string& policy, CallsOnce& once, ContextsOnce& contexts, DecisionLogSink& sink) {
  using namespace decision_log;
  const std::string& path = file.path;
  constexpr size_t kBatch = 64;
  const unsigned char* at[kBatch];
  uint32_t size[kBatch];
  bool ok[kBatch];
  while (true) {
    size_t got = 0;
    const unsigned char* p = in.window(kBatch * kContextRecordBytes, &got);
    // The whole records of the window, up to one whose header is bad or that the window cuts.
    size_t count = 0, used = 0;
    bool stop = false;
    while (count < kBatch && !stop) {
      if (got - used < 8) break;
      const uint32_t kind = decision_log::detail::get<uint32_t>(p + used, 0);
      const uint32_t bytes = decision_log::detail::get<uint32_t>(p + used, 4);
      const uint32_t want = kind == kKindCall       ? call_record_bytes(file.version, false)
                            : kind == kKindContext  ? kContextRecordBytes
                            : kind == kKindKnobCall ? call_record_bytes(file.version, true)
                                                    : 0;
      if (want == 0 || bytes != want) {
        stop = true;  // an error, raised below in file order
        break;
      }
      if (got - used < bytes) break;
      at[count] = p + used;
      size[count++] = bytes;
      used += bytes;
    }
    check_sums(at, size, count, ok);
    for (size_t i = 0; i < count; ++i) {
      const uint64_t offset = in.offset() + uint64_t(at[i] - p);
      if (!ok[i]) fail_at(path, offset, "record checksum does not match (the file is damaged)");
      if (decision_log::detail::get<uint32_t>(at[i], 0) != kKindContext) {
        read_call_record(at[i], offset, file, probabilities, policy, once, sink);
      } else {
        const ContextRecord r = decode_context(at[i]);
        if (const std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty())
          fail_at(path, offset, bad);
        contexts.context(r, path, offset);
        sink.context(r, path, offset);
        ++file.contexts;
      }
    }
    in.advance(used);
    if (count > 0) continue;
    // No whole record at the front: the end of the file, a killed job's partial last record, or a
    // record whose header no plugin writes.
    if (got < 8) {
      file.dropped_tail_bytes = got;
      break;
    }
    const uint32_t kind = decision_log::detail::get<uint32_t>(p, 0);
    const uint32_t bytes = decision_log::detail::get<uint32_t>(p, 4);
    if (!stop) {
      file.dropped_tail_bytes = got;  // a whole header, the rest cut off
      break;
    }
    fail_at(path, in.offset(),
            "unknown record (kind " + std::to_string(kind) + ", " + std::to_string(bytes) + " bytes)");
  }
}

}  // namespace

DecisionLogSummary stream_decision_logs(const std::vector<std::string>& paths, DecisionLogSink& sink) {
  DecisionLogSummary out;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> seen;  // identity, path
  std::optional<PolicyProbabilities> probabilities;
  CallsOnce once;
  ContextsOnce contexts;
  for (const std::string& path : paths) {
    LogInput in(path);
    for (const auto& [identity, earlier] : seen)
      if (identity == in.identity())
        throw InputError(path, 0,
                         "is the same file as '" + earlier + "' given before: each log is read once");
    seen.emplace_back(in.identity(), path);
    DecisionLogFile file = read_header(in, path);
    const std::string policy = header_value(file, "policy"), seed = header_value(file, "seed");
    if (policy.empty()) throw InputError(path, 0, "the header names no policy");
    if (out.files.empty()) {
      out.policy = policy;
      out.seed = seed;
      probabilities.emplace(policy, path, file.header.count("knobs") ? kKnobReplayArms : kNumNcclArms);
    } else if (policy != out.policy || seed != out.seed) {
      throw InputError(path, 0,
                       "logged by policy '" + policy + "' seed " + seed + ", but " + out.files.front().path +
                           " by '" + out.policy + "' seed " + out.seed +
                           ": read logs of one behaviour policy together");
    }
    sink.file(file, out.policy);
    read_records(in, file, *probabilities, out.policy, once, contexts, sink);
    once.end_file(path);
    out.files.push_back(std::move(file));
  }
  return out;
}

}  // namespace ncclbot
