#include "table/decision_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "ncclbot/core/name_table.hpp"
#include "ncclbot/core/utf8_bom.hpp"

namespace ncclbot::table {
namespace {

// ncclbot's format: its header's columns; the last two (the knobs) are optional.
constexpr const char* kNcclbotColumns[] = {"fabric",    "collective", "nodes", "gpus_per_node",
                                           "min_bytes", "max_bytes",  "algo",  "proto",
                                           "channels",  "chunk_bytes"};
constexpr size_t kArmColumns = 8, kKnobColumns = 10;

// Appends one CSV line: `fields` joined by commas.
void append_line(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += fields[i];
  }
  out += '\n';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    out.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_any(std::string_view s) {
  return s == "*" || s == "-1" || s.empty();
}

// Whole-field unsigned decimal integer; nullopt for anything else or a value past uint64_t. Every
// uint64_t is a value here (none stands for "any"), so 2^64 - 1 is never taken for a wildcard.
std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20 || s.front() < '0' || s.front() > '9') return std::nullopt;
  const std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(tmp.c_str(), &end, 10);
  if (errno != 0 || end != tmp.c_str() + tmp.size()) return std::nullopt;
  return uint64_t(v);
}

// A byte bound: "*", "-1" and "" give `any_value`.
bool parse_bytes(std::string_view s, uint64_t any_value, uint64_t* out) {
  const std::optional<uint64_t> v = is_any(s) ? std::optional<uint64_t>(any_value) : parse_u64(s);
  if (v) *out = *v;
  return v.has_value();
}

// A count NCCL holds in an int (nodes, ranks, channels): "*", "-1" and "" give kAny; a value past
// INT_MAX is refused rather than wrapped or taken for "any".
bool parse_int(std::string_view s, int* out) {
  if (is_any(s)) {
    *out = kAny;
    return true;
  }
  const std::optional<uint64_t> v = parse_u64(s);
  if (!v || *v > uint64_t(std::numeric_limits<int>::max())) return false;
  *out = int(*v);
  return true;
}

std::string bad_count(const char* column, std::string_view s) {
  return std::string("bad ") + column + " '" + std::string(s) + "' (an integer from 0 to " +
         std::to_string(std::numeric_limits<int>::max()) + ", or -1 or * for any)";
}

struct LineError {
  std::string* out;
  const std::string& source;
  long line;
  bool operator()(const std::string& reason) const {
    *out = source + ":" + std::to_string(line) + ": " + reason;
    return false;
  }
};

// algo/proto pair: both names, or both "auto" (keep NCCL's choice).
bool parse_arm(std::string_view algo, std::string_view proto, DecisionRow* row, const LineError& fail) {
  const bool algo_auto = algo == "auto" || algo == "AUTO" || algo == "-1";
  const bool proto_auto = proto == "auto" || proto == "AUTO" || proto == "-1";
  if (algo_auto != proto_auto) return fail("algorithm and protocol must both be set or both be auto");
  if (algo_auto) return true;
  row->algo = nccl_algo_index(algo);
  if (row->algo < 0) return fail("unknown algorithm '" + std::string(algo) + "'");
  row->proto = proto_index(proto);
  if (row->proto < 0) return fail("unknown protocol '" + std::string(proto) + "'");
  return true;
}

bool parse_collective_field(std::string_view s, DecisionRow* row, const LineError& fail) {
  if (s == "*" || s == "-1") return true;
  row->collective = collective_index(s);
  if (row->collective < 0) return fail("unknown collective '" + std::string(s) + "'");
  return true;
}

// 0 and -1 (or "*", empty) keep NCCL's count, as NCCL reads a tuner's 0; a negative other than -1
// or a count above NCCL's 64 channels is refused.
bool parse_channels(std::string_view s, DecisionRow* row, const LineError& fail) {
  if (!parse_int(s, &row->channels) || row->channels > kMaxChannels)
    return fail("bad channels '" + std::string(s) + "' (0 to " + std::to_string(kMaxChannels) +
                ", or -1 or * for NCCL's)");
  return true;
}

// A chunk size NCCL would keep as it is for the row's protocol (chunk_fits_grain).
bool check_chunk_grain(const DecisionRow& row, const LineError& fail) {
  if (row.chunk_bytes == 0 || chunk_fits_grain(row.chunk_bytes, row.proto)) return true;
  const std::string grain = std::to_string(chunk_grain_bytes(row.proto));
  return fail("chunk_bytes " + std::to_string(row.chunk_bytes) + " is not a multiple of " +
              std::string(kProtoNames[row.proto]) + "'s grain of " + grain +
              " bytes (NCCL rounds a chunk down to it, " + "and one below it to 0)");
}

bool parse_ncclbot_row(const std::vector<std::string_view>& f, DecisionRow* row, const LineError& fail) {
  if (f.size() < kArmColumns || f.size() > kKnobColumns)
    return fail("expected 8 to 10 fields, found " + std::to_string(f.size()));
  row->fabric = std::string(f[0]);
  if (!parse_collective_field(f[1], row, fail)) return false;
  if (!parse_int(f[2], &row->nodes)) return fail(bad_count("nodes", f[2]));
  if (!parse_int(f[3], &row->gpus_per_node)) return fail(bad_count("gpus_per_node", f[3]));
  if (!parse_bytes(f[4], 0, &row->min_bytes)) return fail("bad min_bytes '" + std::string(f[4]) + "'");
  if (!parse_bytes(f[5], UINT64_MAX, &row->max_bytes))
    return fail("bad max_bytes '" + std::string(f[5]) + "'");
  if (!parse_arm(f[6], f[7], row, fail)) return false;
  if (f.size() > 8 && !parse_channels(f[8], row, fail)) return false;
  if (f.size() > 9) {
    if (!parse_bytes(f[9], 0, &row->chunk_bytes) || row->chunk_bytes > kMaxChunkBytes)
      return fail("bad chunk_bytes '" + std::string(f[9]) + "' (an integer up to " +
                  std::to_string(kMaxChunkBytes) + ", or * for NCCL's)");
    if (row->chunk_bytes > 0 && row->algo == kAny)
      return fail("a chunk size needs an algorithm and a protocol (it is asked for the arm NCCL runs)");
    if (!check_chunk_grain(*row, fail)) return false;
  }
  return true;
}

bool parse_nccl_row(const std::vector<std::string_view>& f, DecisionRow* row, const LineError& fail) {
  if (f.size() < 8 || f.size() > 10)
    return fail("expected 8 to 10 fields, found " + std::to_string(f.size()));
  if (!parse_collective_field(f[0], row, fail)) return false;
  if (!parse_bytes(f[1], 0, &row->min_bytes)) return fail("bad min_bytes '" + std::string(f[1]) + "'");
  if (!parse_bytes(f[2], UINT64_MAX, &row->max_bytes))
    return fail("bad max_bytes '" + std::string(f[2]) + "'");
  if (!parse_arm(f[3], f[4], row, fail)) return false;
  if (!parse_channels(f[5], row, fail)) return false;
  if (!parse_int(f[6], &row->nodes)) return fail(bad_count("nNodes", f[6]));
  if (!parse_int(f[7], &row->ranks)) return fail(bad_count("nRanks", f[7]));
  if (f.size() > 8 && !parse_int(f[8], &row->num_pipe_ops)) return fail(bad_count("numPipeOps", f[8]));
  if (f.size() > 9 && !parse_int(f[9], &row->reg_buff)) return fail(bad_count("regBuff", f[9]));
  return true;
}

}  // namespace

bool DecisionTable::parse(std::string_view text, const std::string& source, const std::string& fabric,
                          std::string* error) {
  rows_.clear();
  text = without_utf8_bom(text);
  bool format_known = false;
  long line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = (nl == std::string_view::npos) ? text.size() + 1 : nl + 1;
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const LineError fail{error, source, line_no};
    const auto fields = split_fields(line);
    if (!format_known) {
      format_known = true;
      if (fields[0] == "fabric") {
        format_ = Format::kNcclbot;
        if (fields.size() < kArmColumns || fields.size() > kKnobColumns)
          return fail("header must have 8 to 10 columns");
        for (size_t i = 0; i < fields.size(); ++i)
          if (fields[i] != kNcclbotColumns[i])
            return fail("header column " + std::to_string(i + 1) + " must be " + kNcclbotColumns[i]);
        continue;
      }
      format_ = Format::kNcclExample;
    }
    DecisionRow row;
    row.line = line_no;
    const bool ok = format_ == Format::kNcclbot ? parse_ncclbot_row(fields, &row, fail)
                                                : parse_nccl_row(fields, &row, fail);
    if (!ok) return false;
    if (row.min_bytes > row.max_bytes) return fail("min_bytes is larger than max_bytes");
    if (!fabric.empty() && !row.fabric.empty() && row.fabric != "*" && row.fabric != fabric) continue;
    rows_.push_back(std::move(row));
  }
  return true;
}

std::vector<const DecisionRow*> DecisionTable::rows_for(int nodes, int ranks) const {
  std::vector<const DecisionRow*> out;
  const int gpn = (nodes > 0 && ranks % nodes == 0) ? ranks / nodes : -2;  // -2 never equals a row value
  for (const DecisionRow& r : rows_) {
    if (r.nodes != kAny && r.nodes != nodes) continue;
    if (r.ranks != kAny && r.ranks != ranks) continue;
    if (r.gpus_per_node != kAny && r.gpus_per_node != gpn) continue;
    out.push_back(&r);
  }
  return out;
}

bool DecisionTable::matches(const DecisionRow& row, const CallKey& key) {
  if (row.collective != kAny && row.collective != key.collective) return false;
  if (key.bytes < row.min_bytes || key.bytes > row.max_bytes) return false;
  if (row.nodes != kAny && row.nodes != key.nodes) return false;
  if (row.ranks != kAny && row.ranks != key.ranks) return false;
  if (row.num_pipe_ops != kAny && key.num_pipe_ops != kAny && row.num_pipe_ops != key.num_pipe_ops)
    return false;
  if (row.reg_buff != kAny && key.reg_buff != kAny && row.reg_buff != key.reg_buff) return false;
  return true;
}

namespace {

std::string count_text(int n) {
  return n == kAny ? "*" : std::to_string(n);
}

// NCCL's example tuner spells names in lower case, and three algorithms with '_'.
std::string nccl_csv_name(std::string_view name) {
  if (name == "CollNetDirect") return "collnet_direct";
  if (name == "CollNetChain") return "collnet_chain";
  if (name == "NVLSTree") return "nvls_tree";
  std::string out(name);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

std::string collective_text(int coll) {
  return coll == kAny ? "*" : std::string(kCollectiveNames[coll]);
}

}  // namespace

std::string format_ncclbot_table(const std::vector<DecisionRow>& rows, const std::string& comment) {
  const bool knobs = std::any_of(rows.begin(), rows.end(),
                                 [](const DecisionRow& r) { return r.channels > 0 || r.chunk_bytes > 0; });
  std::string out = "# " + comment + "\n";
  append_line(out, {kNcclbotColumns, kNcclbotColumns + (knobs ? kKnobColumns : kArmColumns)});
  for (const auto& r : rows) {
    const bool nccl_own = r.algo == kAny;
    std::vector<std::string> fields = {r.fabric,
                                       collective_text(r.collective),
                                       count_text(r.nodes),
                                       count_text(r.gpus_per_node),
                                       std::to_string(r.min_bytes),
                                       std::to_string(r.max_bytes),
                                       nccl_own ? "auto" : std::string(kAlgoNames[r.algo]),
                                       nccl_own ? "auto" : std::string(kProtoNames[r.proto])};
    if (knobs) fields.insert(fields.end(), {count_text(r.channels), std::to_string(r.chunk_bytes)});
    append_line(out, fields);
  }
  return out;
}

std::string format_nccl_csv(const std::vector<DecisionRow>& rows, const std::string& comment) {
  const auto ranks_of = [](const DecisionRow& r) {
    if (r.ranks != kAny) return r.ranks;
    return r.nodes == kAny || r.gpus_per_node == kAny ? kAny : r.nodes * r.gpus_per_node;
  };
  std::map<std::tuple<int, int, int>, std::string> shape_fabric;
  for (const auto& r : rows) {
    auto [it, inserted] = shape_fabric.emplace(std::make_tuple(r.collective, r.nodes, ranks_of(r)), r.fabric);
    if (!inserted && it->second != r.fabric)
      throw TableFormatError("NCCL's CSV format has no fabric column, and fabrics '" + it->second +
                             "' and '" + r.fabric + "' both have " + collective_text(r.collective) + " at " +
                             count_text(r.nodes) + " nodes; choose one with --fabric");
  }
  for (const auto& r : rows)
    if (r.chunk_bytes != 0)
      throw TableFormatError("NCCL's CSV format has no chunk size column, and the decisions set one (" +
                             collective_text(r.collective) + " at " + count_text(r.nodes) +
                             " nodes: " + std::to_string(r.chunk_bytes) +
                             " B); use --format ncclbot, whose table the plugin reads with its chunk sizes");
  std::string out =
      "# " + comment + "\n# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const auto& r : rows) {
    const bool nccl_own = r.algo == kAny;
    std::vector<std::string> fields = {
        r.collective == kAny ? std::string("-1") : nccl_csv_name(kCollectiveNames[r.collective]),
        std::to_string(r.min_bytes),
        std::to_string(r.max_bytes),
        nccl_own ? std::string("auto") : nccl_csv_name(kAlgoNames[r.algo]),
        nccl_own ? std::string("auto") : nccl_csv_name(kProtoNames[r.proto]),
        r.channels > 0 ? std::to_string(r.channels) : std::string("-1"),
        std::to_string(r.nodes),
        std::to_string(ranks_of(r))};
    if (r.num_pipe_ops != kAny || r.reg_buff != kAny) fields.push_back(std::to_string(r.num_pipe_ops));
    if (r.reg_buff != kAny) fields.push_back(std::to_string(r.reg_buff));
    append_line(out, fields);
  }
  return out;
}

}  // namespace ncclbot::table
