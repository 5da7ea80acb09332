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
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_side_data.hpp"

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
  kPrior,  // this one and those after it are optional
  kChannels,
  kChunkBytes,
  kNumColumns
};
constexpr std::array<std::string_view, kNumColumns> kColumnNames = {
    "fabric", "collective", "nodes",   "gpus_per_node", "bytes",    "algo",
    "proto",  "sample",     "time_us", "prior_us",      "channels", "chunk_bytes"};

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
  // A knob column's value: an integer in [0, hi], 0 for NCCL's own; never empty.
  uint64_t knob(std::string_view tok, std::string_view col, uint64_t hi) const {
    if (tok.empty()) fail(std::string(col) + " is empty (0 means NCCL's own value)");
    const auto v = parse_uint(tok);
    if (!v || *v > hi)
      fail(std::string(col) + " must be an integer in [0, " + std::to_string(hi) + "] (0: NCCL's own), got " +
           quoted_value(tok));
    return *v;
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
    set_dynamics_value(d, key, value, source, lineno);
  }
  if (!seen.count("shift_arm_size")) std::swap(d.call.shift_size, d.call.shift_arm_size);
  return d;
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
  for (int k = 0; k < kPrior; ++k)  // the columns before prior_us are required
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
  Arm arm = Arm::of_slot(arm_slot(*algo, *proto));
  if (index[kChannels] >= 0) arm.channels = uint16_t(row.knob(field(kChannels), "channels", kMaxChannels));
  if (index[kChunkBytes] >= 0)
    arm.chunk_bytes = uint32_t(row.knob(field(kChunkBytes), "chunk_bytes", kMaxChunkBytes));
  builder.add(ctx, arm, int(*sample), time, prior, lineno);
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
  Sweep sweep = parse_sweep_csv(in.stream(), path);
  const std::string side_path = sweep_side_data_path(path);
  const auto side = read_input_file_if_exists(side_path, kMaxConfigBytes);
  if (side) {
    if (sweep.dynamics().any())
      throw InputError(side_path, 0,
                       "gives call dynamics, and so does the '# dynamics:' line of " + path + ": keep one");
    sweep.set_dynamics(parse_sweep_side_data(*side, side_path));
  }
  return sweep;
}

void write_sweep_csv(const Sweep& sweep, std::ostream& out) {
  const bool knobs = !sweep.slot_shaped();
  out << "fabric,collective,nodes,gpus_per_node,bytes,algo,proto" << (knobs ? ",channels,chunk_bytes" : "")
      << ",sample,time_us" << (sweep.has_prior() ? ",prior_us" : "") << '\n';
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const Context& ctx = sweep.context(c);
    const auto arms = sweep.arms(c);
    for (int i = 0; i < int(arms.size()); ++i) {
      const Arm& arm = arms[size_t(i)];
      for (int r = 0; r < sweep.samples(); ++r) {
        out << ctx.fabric << ',' << collective_name(ctx.collective) << ',' << ctx.nodes << ','
            << ctx.gpus_per_node << ',' << ctx.bytes << ',' << algo_name(arm.algo) << ','
            << proto_name(arm.proto);
        if (knobs) out << ',' << arm.channels << ',' << arm.chunk_bytes;
        out << ',' << r << ',' << format_float(sweep.arm_sample(c, i, r));
        if (sweep.has_prior()) out << ',' << format_float(sweep.arm_prior(c, i));
        out << '\n';
      }
    }
  }
}

void write_sweep_csv(const Sweep& sweep, const std::string& path) {
  // Temporaries beside them, renamed when complete: a reader never sees a half-written sweep. A side
  // file left by an earlier sweep of that name goes, or its dynamics would be read with this one.
  const std::string side = sweep_side_data_text(sweep.dynamics());
  check_sweep_side_data_writable(path, side);
  OutputFile out(path, "--out");
  write_sweep_csv(sweep, out.stream());
  out.commit();
  write_sweep_side_data(path, side);
}

}  // namespace ncclbot
