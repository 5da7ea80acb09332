#include "ncclbot/log/decision_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot {
namespace {

constexpr uint64_t kMaxLogBytes = uint64_t(64) << 30;

[[noreturn]] void fail_at(const std::string& path, uint64_t offset, const std::string& reason) {
  throw InputError(path, 0, "byte " + std::to_string(offset) + ": " + reason);
}

// A decision log opened for reading (InputFile): a regular file only, since a FIFO or a device
// would block or never end, read through a fixed buffer, so the reader's memory is bounded whatever
// the file holds; only the records it keeps grow. Counts the bytes handed out.
class LogInput {
 public:
  explicit LogInput(const std::string& path) : file_(path, kMaxLogBytes, false) {}

  // Up to n bytes into `out`; fewer only at the end of the file.
  size_t read(unsigned char* out, size_t n) {
    file_.stream().read(reinterpret_cast<char*>(out), std::streamsize(n));
    const size_t got = size_t(file_.stream().gcount());
    offset_ += got;
    return got;
  }
  uint64_t offset() const { return offset_; }  // bytes handed out so far
  std::pair<uint64_t, uint64_t> identity() const { return file_.identity(); }

 private:
  InputFile file_;
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

std::string call_problem(const decision_log::CallRecord& r) {
  if (std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty()) return bad;
  if (r.slot < 0 || r.slot >= kNumNcclArms)
    return "the arm that ran, " + std::to_string(r.slot) + ", is no arm";
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

DecisionLogFile read_one(LogInput& in, const std::string& path, DecisionLogData& data) {
  using namespace decision_log;
  DecisionLogFile file;
  file.path = path;
  unsigned char head[16];
  if (in.read(head, 16) < 16 || std::memcmp(head, kMagic, 8) != 0)
    throw InputError(path, 0, "not an ncclbot decision log (no NCBTLOG header; a truncated file?)");
  const uint32_t version = decision_log::detail::get<uint32_t>(head, 8);
  if (version != kDecisionLogVersion)
    throw InputError(path, 0,
                     "decision log version " + std::to_string(version) + ", this ncclbot reads version " +
                         std::to_string(kDecisionLogVersion));
  const uint32_t header_bytes = decision_log::detail::get<uint32_t>(head, 12);
  std::string text(header_bytes >= 16 && header_bytes <= kMaxHeaderBytes ? header_bytes - 16 : 0, '\0');
  if (header_bytes < 16 || header_bytes % 8 != 0 || header_bytes > kMaxHeaderBytes ||
      in.read(reinterpret_cast<unsigned char*>(text.data()), text.size()) < text.size())
    throw InputError(path, 0,
                     "the header is damaged or truncated (says " + std::to_string(header_bytes) + " bytes)");
  file.header = parse_header(path, text);
  unsigned char record[kContextRecordBytes];
  static_assert(kContextRecordBytes >= kCallRecordBytes);
  while (true) {
    const uint64_t at = in.offset();
    const size_t got = in.read(record, 8);
    if (got < 8) {
      file.dropped_tail_bytes = got;  // nothing left, or a killed job's partial record
      break;
    }
    const uint32_t kind = decision_log::detail::get<uint32_t>(record, 0);
    const uint32_t size = decision_log::detail::get<uint32_t>(record, 4);
    const uint32_t want = kind == kKindCall      ? kCallRecordBytes
                          : kind == kKindContext ? kContextRecordBytes
                                                 : 0;
    if (want == 0 || size != want)
      fail_at(path, at,
              "unknown record (kind " + std::to_string(kind) + ", " + std::to_string(size) + " bytes)");
    if (const size_t rest = in.read(record + 8, size - 8); rest < size - 8) {
      file.dropped_tail_bytes = 8 + rest;  // a killed job's last, partial record
      break;
    }
    if (!intact(record, size)) fail_at(path, at, "record checksum does not match (the file is damaged)");
    try {
      if (kind == kKindCall) {
        const CallRecord r = decode_call(record);
        if (const std::string bad = call_problem(r); !bad.empty()) fail_at(path, at, bad);
        data.calls.push_back(r);
        data.call_offsets.push_back(at);
        ++file.calls;
      } else {
        const ContextRecord r = decode_context(record);
        if (const std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty())
          fail_at(path, at, bad);
        data.contexts.push_back(r);
        ++file.contexts;
      }
    } catch (const std::bad_alloc&) {
      fail_at(path, at, "more records than this machine's memory holds; read fewer logs at once");
    }
  }
  return file;
}

std::string header_value(const DecisionLogFile& file, const char* key) {
  const auto it = file.header.find(key);
  return it == file.header.end() ? std::string() : it->second;
}

[[noreturn]] void fail_at_call(const DecisionLogData& data, size_t i, const std::string& reason) {
  const auto [path, offset] = decision_log_call_place(data, i);
  fail_at(path, offset, reason);
}

// Every call of a context is logged once: the same (communicator, collective, size, call index) twice
// is a log read twice under another name, or a damaged or crafted one, and would count twice.
void refuse_duplicate_calls(const DecisionLogData& data) {
  const auto key = [&](size_t i) {
    const auto& r = data.calls[i];
    return std::tuple(r.comm_hash, r.collective, r.bytes, r.nodes, r.ranks, r.call_index);
  };
  std::vector<uint32_t> order(data.calls.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return key(a) != key(b) ? key(a) < key(b) : a < b; });
  for (size_t k = 1; k < order.size(); ++k)
    if (key(order[k]) == key(order[k - 1])) {
      const auto [first, offset] = decision_log_call_place(data, order[k - 1]);
      fail_at_call(data, order[k],
                   "call " + std::to_string(data.calls[order[k]].call_index) +
                       " of its context is logged twice (also at byte " + std::to_string(offset) + " of " +
                       first + ")");
    }
}

// The header's policy is a policy spec, and the records' probabilities are ones it can give: 1 for
// a deterministic policy, 1/K for `random`, eps/K or eps/K + 1 - eps for epsilon-greedy without
// decay, for a whole number of arms K in 1..21 (the context's arms as the policy saw them, which in
// leader mode the ranks' tables decide, not the logged one). A header that says otherwise sits over
// another policy's records.
void check_policy_agrees(const DecisionLogData& data) {
  PolicySpec spec;
  try {
    spec = parse_policy_spec(data.policy);
  } catch (const std::exception&) {
    throw InputError(data.files.front().path, 0,
                     "the header's policy '" + data.policy + "' is no policy spec");
  }
  const bool deterministic =
      visit_policy(spec.config, [](auto& p) { return std::remove_reference_t<decltype(p)>::kDeterministic; });
  const PolicyKind kind = spec.config.kind;
  const bool fixed_eps = kind == PolicyKind::kEpsGreedy && spec.config.decay == 0.0;
  if (!deterministic && kind != PolicyKind::kRandom && !fixed_eps)
    return;  // Thompson sampling and decaying epsilon-greedy: any probability in (0, 1]
  const double e = spec.config.eps;
  const auto possible = [&](double p) {
    if (deterministic) return p == 1.0;
    for (int k = 1; k <= kNumNcclArms; ++k)
      if (kind == PolicyKind::kRandom ? p == 1.0 / double(k)
                                      : (p == e / double(k) || p == e / double(k) + (1.0 - e)))
        return true;
    return false;
  };
  for (size_t i = 0; i < data.calls.size(); ++i)
    if (!possible(data.calls[i].propensity)) {
      std::ostringstream v;
      v.precision(17);
      v << data.calls[i].propensity;
      fail_at_call(data, i,
                   "probability " + v.str() + " is none that the header's policy '" + data.policy +
                       "' gives (a header over another policy's records?)");
    }
}

}  // namespace

std::pair<std::string, uint64_t> decision_log_call_place(const DecisionLogData& data, size_t i) {
  size_t first = 0;
  for (const DecisionLogFile& f : data.files) {
    if (i < first + f.calls) return {f.path, data.call_offsets[i]};
    first += f.calls;
  }
  throw std::out_of_range("decision_log_call_place: no call " + std::to_string(i));
}

DecisionLogData read_decision_logs(const std::vector<std::string>& paths) {
  DecisionLogData data;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> seen;  // identity, path
  for (const std::string& path : paths) {
    LogInput in(path);
    for (const auto& [identity, earlier] : seen)
      if (identity == in.identity())
        throw InputError(path, 0,
                         "is the same file as '" + earlier + "' given before: each log is read once");
    seen.emplace_back(in.identity(), path);
    DecisionLogFile file = read_one(in, path, data);
    const std::string policy = header_value(file, "policy"), seed = header_value(file, "seed");
    if (policy.empty()) throw InputError(path, 0, "the header names no policy");
    if (data.files.empty()) {
      data.policy = policy;
      data.seed = seed;
    } else if (policy != data.policy || seed != data.seed) {
      throw InputError(path, 0,
                       "logged by policy '" + policy + "' seed " + seed + ", but " + data.files.front().path +
                           " by '" + data.policy + "' seed " + data.seed +
                           ": read logs of one behaviour policy together");
    }
    data.files.push_back(std::move(file));
  }
  if (!data.files.empty()) {
    check_policy_agrees(data);
    refuse_duplicate_calls(data);
  }
  return data;
}

}  // namespace ncclbot
