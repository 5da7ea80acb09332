#include "ncclbot/io/sweep_csv.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/core/utf8_bom.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot {
namespace {

enum Column {
  kFabric,
  kCollective,
  kNodes,
  kGpusPerNode,
  kBytes,
  kAlgo,
  kProto,
  kSample,
  kTime,
  kPrior,
  kNumColumns
};
constexpr std::array<std::string_view, kNumColumns> kColumnNames = {
    "fabric", "collective", "nodes",  "gpus_per_node", "bytes",
    "algo",   "proto",      "sample", "time_us",       "prior_us"};

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(
        line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool valid_fabric_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) return false;
  return true;
}

class RowParser {
 public:
  RowParser(const std::string& source, long line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& reason) const { throw InputError(source_, line_, reason); }

  int positive_int(std::string_view tok, std::string_view col) const {
    auto v = parse_int(tok);
    if (!v || *v <= 0 || *v > (1 << 20))
      fail(std::string(col) + " must be a positive integer, got " + quoted_value(tok));
    return int(*v);
  }
  float time(std::string_view tok, std::string_view col) const {
    auto v = parse_float(tok);
    if (!v) fail(std::string(col) + " is not a number: " + quoted_value(tok));
    if (std::isnan(*v)) fail(std::string(col) + " is NaN");
    if (std::isinf(*v)) fail(std::string(col) + " is infinite (or out of float range): " + quoted_value(tok));
    if (*v <= 0.0f) fail(std::string(col) + " must be positive, got " + quoted_value(tok));
    return *v;
  }

 private:
  const std::string& source_;
  long line_;
};

// A sweep row is under 200 bytes; a longer line is not a sweep (or is /dev/zero).
constexpr size_t kMaxLineBytes = 64 * 1024;

// std::getline without its unbounded growth: one line (without '\n'), false at the end of input.
// Also ends the whole read once more than kMaxSweepBytes came in.
class LineReader {
 public:
  LineReader(std::istream& in, const std::string& source) : in_(in), source_(source) {}
  bool next(std::string& line, long lineno) {
    line.clear();
    std::streambuf* sb = in_.rdbuf();
    while (true) {
      const int c = sb->sbumpc();
      if (c == std::char_traits<char>::eof()) return !line.empty();
      if (++total_ > kMaxSweepBytes)
        throw InputError(source_, lineno,
                         "larger than the " + std::to_string(kMaxSweepBytes >> 20) + " MiB a sweep may have");
      if (c == '\n') return true;
      if (line.size() >= kMaxLineBytes)
        throw InputError(source_, lineno, "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
      line.push_back(char(c));
    }
  }

 private:
  std::istream& in_;
  const std::string& source_;
  uint64_t total_ = 0;
};

constexpr std::string_view kDynamicsPrefix = "# dynamics:";

// "# dynamics: key=value ..." (write_dynamics_line's keys, each once, any order): the call dynamics
// the sweep carries (core/call_dynamics.hpp). Unknown keys, repeats and bad numbers are errors. A
// line without shift_arm_size comes from before levels had a shared part: its shift_size was each
// arm's own, and is read as that.
SweepDynamics parse_dynamics_line(std::string_view text, const std::string& source, long lineno) {
  SweepDynamics d;
  std::set<std::string> seen;
  std::string_view rest = text.substr(kDynamicsPrefix.size());
  while (true) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    const size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view item = rest.substr(0, end);
    rest.remove_prefix(end);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError(source, lineno, "dynamics item '" + std::string(item) + "' is not key=value");
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key).second)
      throw InputError(source, lineno, "dynamics key '" + key + "' appears twice");
    auto number = [&](double lo, double hi) {
      const auto v = parse_double(value);
      if (!v || !(*v >= lo && *v <= hi))
        throw InputError(source, lineno,
                         "dynamics " + key + " = '" + std::string(value) + "' is not a number in [" +
                             format_double(lo) + ", " + format_double(hi) + "]");
      return *v;
    };
    auto count = [&]() {
      const auto v = parse_int(value);
      if (!v || *v < 0 || *v > 100000000)
        throw InputError(source, lineno,
                         "dynamics " + key + " = '" + std::string(value) + "' is not an integer in [0, 1e8]");
      return int(*v);
    };
    if (key == "job_warmup")
      d.call.job_warmup = float(number(0.0, 100.0));
    else if (key == "job_warmup_calls")
      d.call.job_warmup_calls = count();
    else if (key == "arm_warmup")
      d.call.arm_warmup = float(number(0.0, 100.0));
    else if (key == "arm_warmup_calls")
      d.call.arm_warmup_calls = count();
    else if (key == "shift_rate")
      d.call.shift_rate = float(number(0.0, 0.999));
    else if (key == "shift_size")
      d.call.shift_size = float(number(0.0, 0.999));
    else if (key == "shift_arm_size")
      d.call.shift_arm_size = float(number(0.0, 0.999));
    else if (key == "first_use_base_us")
      d.first_use_base_us = number(0.0, 1e9);
    else if (key == "first_use_per_host_us")
      d.first_use_per_host_us = number(0.0, 1e9);
    else
      throw InputError(
          source, lineno,
          "unknown dynamics key '" + key +
              "' (valid: job_warmup, job_warmup_calls, arm_warmup, arm_warmup_calls, "
              "shift_rate, shift_size, shift_arm_size, first_use_base_us, first_use_per_host_us)");
  }
  if (!seen.count("shift_arm_size")) std::swap(d.call.shift_size, d.call.shift_arm_size);
  return d;
}

void write_dynamics_line(const SweepDynamics& d, std::ostream& out) {
  const CallDynamics& c = d.call;
  out << kDynamicsPrefix << " job_warmup=" << format_float(c.job_warmup)
      << " job_warmup_calls=" << c.job_warmup_calls << " arm_warmup=" << format_float(c.arm_warmup)
      << " arm_warmup_calls=" << c.arm_warmup_calls << " shift_rate=" << format_float(c.shift_rate)
      << " shift_size=" << format_float(c.shift_size) << " shift_arm_size=" << format_float(c.shift_arm_size)
      << " first_use_base_us=" << format_double(d.first_use_base_us)
      << " first_use_per_host_us=" << format_double(d.first_use_per_host_us) << '\n';
}

// Maps each header field to its column in `index`; unknown, repeated or missing columns are errors.
void read_sweep_header(const std::vector<std::string_view>& fields, const std::string& source, long lineno,
                       std::array<int, kNumColumns>& index) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto name = trim(fields[i]);
    int col = -1;
    for (int k = 0; k < kNumColumns; ++k)
      if (kColumnNames[k] == name) col = k;
    if (col < 0) throw InputError(source, lineno, "unknown column '" + std::string(name) + "' in header");
    if (index[col] >= 0) throw InputError(source, lineno, "column '" + std::string(name) + "' appears twice");
    index[col] = int(i);
  }
  for (int k = 0; k < kPrior; ++k)
    if (index[k] < 0)
      throw InputError(source, lineno, "header is missing column '" + std::string(kColumnNames[k]) + "'");
}

// Parses one data row (its fields found by `index`) and adds it to the builder.
void add_sweep_row(const std::vector<std::string_view>& fields, const std::array<int, kNumColumns>& index,
                   size_t num_fields, const std::string& source, long lineno, SweepBuilder& builder) {
  RowParser row(source, lineno);
  if (fields.size() != num_fields)
    row.fail("expected " + std::to_string(num_fields) + " fields, found " + std::to_string(fields.size()));
  auto field = [&](Column c) { return trim(fields[size_t(index[c])]); };

  Context ctx;
  ctx.fabric = std::string(field(kFabric));
  if (!valid_fabric_name(ctx.fabric))
    row.fail("fabric name '" + ctx.fabric + "' must be 1-64 characters of letters, digits, '-', '_' or '.'");
  const auto coll = parse_collective(field(kCollective));
  if (!coll)
    row.fail("unknown collective '" + std::string(field(kCollective)) +
             "' (valid: " + std::string(collective_names_list()) + ")");
  ctx.collective = *coll;
  ctx.nodes = row.positive_int(field(kNodes), "nodes");
  ctx.gpus_per_node = row.positive_int(field(kGpusPerNode), "gpus_per_node");
  const auto bytes = parse_uint(field(kBytes));
  if (!bytes) row.fail("bytes must be a non-negative integer, got " + quoted_value(field(kBytes)));
  ctx.bytes = *bytes;
  const auto algo = parse_algo(field(kAlgo));
  if (!algo)
    row.fail("unknown algo '" + std::string(field(kAlgo)) + "' (valid: " + std::string(algo_names_list()) +
             ")");
  const auto proto = parse_proto(field(kProto));
  if (!proto)
    row.fail("unknown proto '" + std::string(field(kProto)) + "' (valid: " + std::string(proto_names_list()) +
             ")");
  if (*algo == Algo::kHiPipe && *proto != Proto::kSimple)
    row.fail("algo HiPIPE (the simulated arm) runs with proto Simple only, not " +
             std::string(proto_name(*proto)));
  const auto sample = parse_int(field(kSample));
  if (!sample || *sample < 0 || *sample > (1 << 24))
    row.fail("sample must be an integer index >= 0, got " + quoted_value(field(kSample)));
  const float time = row.time(field(kTime), "time_us");
  std::optional<float> prior;
  if (index[kPrior] >= 0) prior = row.time(field(kPrior), "prior_us");
  builder.add(ctx, arm_slot(*algo, *proto), int(*sample), time, prior, lineno);
}

}  // namespace

Sweep parse_sweep_csv(std::istream& in, const std::string& source) {
  std::string line;
  long lineno = 0;
  std::array<int, kNumColumns> index;
  index.fill(-1);
  size_t num_fields = 0;
  bool have_header = false;
  SweepBuilder builder(source);
  LineReader reader(in, source);
  std::optional<SweepDynamics> dynamics;

  while (reader.next(line, lineno + 1)) {
    ++lineno;
    const std::string_view text = trim(lineno == 1 ? without_utf8_bom(line) : std::string_view(line));
    if (text.substr(0, kDynamicsPrefix.size()) == kDynamicsPrefix) {
      if (dynamics) throw InputError(source, lineno, "a second '# dynamics:' line");
      dynamics = parse_dynamics_line(text, source, lineno);
      continue;
    }
    if (text.empty() || text.front() == '#') continue;
    if (text.find('\0') != std::string_view::npos) throw InputError(source, lineno, "binary data (NUL byte)");
    const auto fields = split_commas(text);
    if (!have_header) {
      read_sweep_header(fields, source, lineno, index);
      num_fields = fields.size();
      have_header = true;
      continue;
    }
    add_sweep_row(fields, index, num_fields, source, lineno, builder);
  }
  if (in.bad()) throw InputError(source, lineno, "read error");
  if (!have_header) throw InputError(source, 0, "empty file (no header line)");
  Sweep sweep = builder.build();
  if (dynamics) sweep.set_dynamics(*dynamics);
  return sweep;
}

Sweep read_sweep_csv(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "is a folder, not a sweep CSV");
  InputFile in(path, kMaxSweepBytes);
  return parse_sweep_csv(in.stream(), path);
}

void write_sweep_csv(const Sweep& sweep, std::ostream& out) {
  if (sweep.dynamics().any()) write_dynamics_line(sweep.dynamics(), out);
  out << "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us";
  if (sweep.has_prior()) out << ",prior_us";
  out << '\n';
  const SweepView v = sweep.view();
  for (int c = 0; c < v.num_contexts; ++c) {
    const Context& ctx = sweep.context(c);
    for (int a = 0; a < kNumArms; ++a) {
      if (!v.mask(c).has(a)) continue;
      for (int r = 0; r < v.samples; ++r) {
        out << ctx.fabric << ',' << collective_name(ctx.collective) << ',' << ctx.nodes << ','
            << ctx.gpus_per_node << ',' << ctx.bytes << ',' << algo_name(slot_algo(a)) << ','
            << proto_name(slot_proto(a)) << ',' << r << ',' << format_float(v.sample(c, a, r));
        if (v.has_prior()) out << ',' << format_float(v.prior(c, a));
        out << '\n';
      }
    }
  }
}

void write_sweep_csv(const Sweep& sweep, const std::string& path) {
  // A temporary beside it, renamed when complete: a reader never sees a half-written sweep.
  OutputFile out(path, "--out");
  write_sweep_csv(sweep, out.stream());
  out.commit();
}

}  // namespace ncclbot
