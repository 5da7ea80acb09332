// Run segmentation. A run is one nccl-tests invocation: header lines, device list, column header,
// rows, trailer. Two runs written into one file at the same time (several launchers sharing a
// file) show up as a header repeated before any row, ranks restarting, a size printed twice or a
// second trailer; each is an error naming both lines, because merging them would double-count.
#include <cctype>
#include <variant>

#include "io/nccl_tests/column_layout.hpp"
#include "io/nccl_tests/line_kind.hpp"
#include "io/nccl_tests/line_prefix.hpp"
#include "io/nccl_tests/printed_number.hpp"
#include "io/nccl_tests/row_parser.hpp"
#include "io/nccl_tests/text_log_parser.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::nccl_tests {
namespace {

constexpr int kMaxNoiseWarnings = 5;
constexpr size_t kMaxLineBytes = size_t(1) << 20;  // nccl-tests lines are < 300 bytes

class TextLogParser {
 public:
  TextLogParser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  ParsedLog parse() {
    size_t pos = 0;
    long line_no = 0;
    while (pos < text_.size()) {
      const size_t nl = text_.find('\n', pos);
      const bool last_unterminated = nl == std::string_view::npos;
      const std::string_view raw = text_.substr(pos, last_unterminated ? std::string_view::npos : nl - pos);
      pos = last_unterminated ? text_.size() : nl + 1;
      ++line_no;
      if (raw.size() > kMaxLineBytes)
        fail(line_no,
             "line longer than " + std::to_string(kMaxLineBytes >> 10) + " KiB: not an nccl-tests text log");
      line(strip_launcher_prefix(raw), line_no, last_unterminated);
    }
    finish_run();
    out_.file = file_;
    return std::move(out_);
  }

 private:
  struct Open {
    Run run;
    bool active = false;
    bool closed = false;  // trailer, "concluded" or failure seen: no more rows
    long version_line = 0, starting_line = 0, params_line = 0, oob_line = 0, concluded_line = 0;
    std::optional<ColumnLayout> layout;
  };

  [[noreturn]] void fail(long line, const std::string& reason) const {
    throw InputError(file_, line, reason);
  }
  void warn(long line, std::string message) { out_.warnings.push_back({file_, line, std::move(message)}); }

  void line(std::string_view text, long no, bool last_unterminated) {
    if (text.find_first_not_of(" \t") == std::string_view::npos) return;
    note_environment(text, no);
    note_channels(text, no);

    const HeaderLine header = parse_column_header(text);
    if (header.is_header) return column_header(header, no);

    const std::vector<std::string_view> tokens = split_whitespace(text);
    if (!tokens.empty() && (is_all_digits(tokens[0]) || in_table_row_attempt(text, tokens)))
      return data_row(tokens, no, last_unterminated);

    const LineInfo info = classify_line(text);
    switch (info.kind) {
      case LineKind::kVersion:
        return header_marker(&Open::version_line, "'nccl-tests version' line", no);
      case LineKind::kTestStarting:
        header_marker(&Open::starting_line, "'Collective test starting' line", no);
        cur_.run.test_name = info.text;
        cur_.run.test_name_line = no;
        return;
      case LineKind::kParams:
        return header_marker(&Open::params_line, "'nThread ... nGpus' line", no);
      case LineKind::kDevice:
        return device(info, no);
      case LineKind::kOutOfBounds:
        return out_of_bounds(info, no);
      case LineKind::kAvgBusBw:
        return avg_busbw(info, no);
      case LineKind::kTestConcluded:
        return concluded(info, no);
      case LineKind::kFailure:
        return failure(info, no);
      case LineKind::kNcclWarn:
        if (nccl_warnings_++ < kMaxNoiseWarnings) warn(no, "NCCL warning in the log: " + info.text);
        return;
      case LineKind::kFailureDetail:
      case LineKind::kOther:
        if (auto name = test_name_in_command(text); name && text.find('#') != 0) {
          command_test_name_ = *name;
          command_test_line_ = no;
        }
        return;
    }
  }

  // A shell or launcher setting persists (an export applies to every later run); NCCL's own
  // "set by environment" line belongs to the run being initialised only.
  void note_environment(std::string_view text, long no) {
    for (int which = 0; which < 2; ++which) {
      const char* var = which == 0 ? "NCCL_ALGO" : "NCCL_PROTO";
      bool from_nccl = false;
      const auto value = forced_env_value(text, var, from_nccl);
      if (!value) continue;
      const ForcedSetting setting{
          *value, no, from_nccl ? std::string(var) + " set by environment" : "shell/launcher line"};
      if (!from_nccl) (which == 0 ? env_algo_ : env_proto_) = setting;
      if (cur_.active && !cur_.closed)
        apply_setting(which == 0 ? cur_.run.algo : cur_.run.proto, setting, var);
    }
  }

  // NCCL's count of the channels it set up, for the run being initialised; every rank prints it.
  void note_channels(std::string_view text, long no) {
    const auto n = coll_channels_in(text);
    if (!n || !cur_.active || cur_.closed) return;
    std::optional<ForcedSetting>& seen = cur_.run.coll_channels;
    if (!seen)
      seen = ForcedSetting{std::to_string(*n), no, "NCCL INFO coll channels"};
    else if (seen->value != std::to_string(*n))
      cur_.run.coll_channels_disagree = true;
  }

  void apply_setting(std::optional<ForcedSetting>& slot, const ForcedSetting& s, const char* var) {
    if (slot && !same_setting(slot->value, s.value))
      fail(s.line, std::string(var) + "=" + s.value + " contradicts " + var + "=" + slot->value +
                       " at line " + std::to_string(slot->line) + " within one run");
    if (!slot) slot = s;
  }

  static bool same_setting(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
        return false;
    return true;
  }

  // Inside an open results table, a line that is meant as a row but whose size is not a plain
  // byte count ("-64", "64.5", "1e3", "64B", "abc 16 float ...") must fail as a row, not pass as
  // noise: dropping it silently would lose a size. NCCL's own INFO/WARN lines and comments stay
  // noise.
  bool in_table_row_attempt(std::string_view text, const std::vector<std::string_view>& tokens) const {
    if (!cur_.active || cur_.closed || !cur_.layout) return false;
    if (text.find('#') != std::string_view::npos && text.find_first_not_of(" \t") == text.find('#'))
      return false;
    if (text.find(" NCCL INFO ") != std::string_view::npos ||
        text.find(" NCCL WARN ") != std::string_view::npos)
      return false;
    const std::string_view first = tokens[0];
    const bool numeric_start = std::isdigit(static_cast<unsigned char>(first[0])) ||
                               ((first[0] == '-' || first[0] == '+' || first[0] == '.') && first.size() > 1 &&
                                std::isdigit(static_cast<unsigned char>(first[1])));
    const bool row_shaped = int(tokens.size()) == cur_.layout->columns && tokens.size() > 1 &&
                            is_all_digits(tokens[size_t(cur_.layout->count)]);
    return numeric_start || row_shaped;
  }

  // A new run starts when there is none or the current one is finished. Anything that begins
  // another run while a results table is still open (rows printed, no trailer) is an error: the
  // first run was cut off or two runs share the file, and keeping either part would pass a
  // partial run as a whole one.
  void begin_run_if_needed(long no, const char* what) {
    if (cur_.active && !cur_.closed && !cur_.run.rows.empty())
      fail(no, std::string(what) + " in the middle of the results table of the run at line " +
                   std::to_string(cur_.run.first_line) + " (last row at line " +
                   std::to_string(cur_.run.rows.back().line) +
                   ", no trailer): two runs are interleaved in this file, or the first run was cut off");
    if (cur_.active && !cur_.closed) return;
    finish_run();
    cur_ = Open{};
    cur_.active = true;
    cur_.run.first_line = no;
    if (env_algo_) cur_.run.algo = env_algo_;
    if (env_proto_) cur_.run.proto = env_proto_;
    if (!command_test_name_.empty()) {
      cur_.run.test_name = command_test_name_;
      cur_.run.test_name_line = command_test_line_;
    }
  }

  void finish_run() {
    if (!cur_.active) return;
    if (!cur_.closed && !cur_.run.rows.empty() && !cur_.run.failure)
      warn(cur_.run.rows.back().line,
           "run ends without its trailer ('Avg bus bandwidth' line missing; log truncated?)");
    if (!cur_.run.rows.empty() || cur_.run.failure)
      out_.runs.push_back(std::move(cur_.run));
    else
      warn(cur_.run.first_line, "run starting here printed no results (log truncated?); ignored");
    cur_ = Open{};
  }

  void header_marker(long Open::*seen_at, const char* what, long no) {
    if (cur_.active && !cur_.closed && cur_.run.rows.empty() && cur_.*seen_at > 0)
      fail(no, std::string("second ") + what + " before any result (first at line " +
                   std::to_string(cur_.*seen_at) +
                   "): the output of two runs is interleaved in this file (or the first run died silently)");
    begin_run_if_needed(no, what);
    cur_.*seen_at = no;
  }

  void device(const LineInfo& info, long no) {
    if (cur_.active && !cur_.closed && cur_.run.rows.empty() && cur_.layout)
      fail(no, "device list after the column header (line " + std::to_string(cur_.run.header_line) +
                   "): the output of two runs is interleaved");
    begin_run_if_needed(no, "device list line");
    auto& devs = cur_.run.devices;
    if (!devs.empty() && info.rank <= devs.back().rank)
      fail(no, "rank " + std::to_string(info.rank) + " listed again (rank " +
                   std::to_string(devs.back().rank) + " at line " + std::to_string(devs.back().line) +
                   "): ranks restart, so two runs' device lists are interleaved in this file");
    devs.push_back({no, info.rank, info.host});
  }

  void column_header(const HeaderLine& header, long no) {
    if (!header.layout) fail(no, header.error);
    if (cur_.active && !cur_.closed && cur_.run.rows.empty() && cur_.layout)
      fail(no, "second column header before any result (first at line " +
                   std::to_string(cur_.run.header_line) +
                   "): the output of two runs is interleaved in this file");
    begin_run_if_needed(no, "column header");
    cur_.layout = header.layout;
    cur_.run.header_line = no;
    cur_.run.time_is_cpu = header.layout->cpu_time;
    cur_.run.wrong_is_deviation = header.layout->wrong_is_deviation;
    if (header.layout->cpu_time) warn(no, "times are CPU times (-C 1), not GPU event times");
  }

  void data_row(const std::vector<std::string_view>& tokens, long no, bool last_unterminated) {
    if (!cur_.active || cur_.closed || !cur_.layout) {
      if (noise_rows_++ < kMaxNoiseWarnings) warn(no, "numeric line outside a results table; ignored");
      return;
    }
    auto parsed = parse_row(tokens, *cur_.layout, no);
    if (auto* reason = std::get_if<std::string>(&parsed)) {
      // A log cut off in the middle of a row: the last line, without its newline.
      if (last_unterminated) {
        warn(no, "last row is cut off (" + *reason + "); ignored");
        return;
      }
      fail(no, *reason);
    }
    Row& row = std::get<Row>(parsed);
    auto& rows = cur_.run.rows;
    // `-d all` / `-o all` print one size series per data type and op in the same table: a new
    // (type, redop) starts a new series, so its sizes may start over.
    if (!rows.empty() && rows.back().type == row.type && rows.back().redop == row.redop) {
      const Row& prev = rows.back();
      if (row.bytes == prev.bytes)
        fail(no, "size " + std::to_string(row.bytes) + " printed again (line " + std::to_string(prev.line) +
                     "): two runs interleaved in this file, or a repeated sweep (-R); not merged");
      if (row.bytes < prev.bytes)
        fail(no, "sizes restart at " + std::to_string(row.bytes) + " after " + std::to_string(prev.bytes) +
                     " (line " + std::to_string(prev.line) +
                     ") without a new header: two runs in one table, or a repeated sweep (-R); not merged");
    }
    rows.push_back(std::move(row));
  }

  void out_of_bounds(const LineInfo& info, long no) {
    if (!cur_.active || (!cur_.layout && !cur_.run.failure)) {
      warn(no, "'Out of bounds values' without a results table; ignored");
      return;
    }
    if (cur_.oob_line > 0)
      fail(no, "second trailer for one run (first at line " + std::to_string(cur_.oob_line) +
                   "): the output of two runs is interleaved in this file");
    cur_.oob_line = no;
    cur_.closed = true;
    if (info.value > 0 || info.text == "FAILED")
      warn(no, "nccl-tests reports " + std::to_string(int64_t(info.value)) +
                   " out-of-bounds values (data check FAILED)");
  }

  void avg_busbw(const LineInfo& info, long no) {
    if (!cur_.active || (!cur_.layout && !cur_.run.failure)) {
      warn(no, "'Avg bus bandwidth' without a results table; ignored");
      return;
    }
    if (cur_.run.trailer_line > 0)
      fail(no, "second 'Avg bus bandwidth' for one run (first at line " +
                   std::to_string(cur_.run.trailer_line) +
                   "): the output of two runs is interleaved in this file");
    cur_.run.trailer_line = no;
    cur_.run.avg_busbw = info.value;
    cur_.closed = true;
  }

  void concluded(const LineInfo& info, long no) {
    if (!cur_.active) return;
    if (cur_.concluded_line > 0)
      fail(no, "second 'Collective test concluded' for one run (first at line " +
                   std::to_string(cur_.concluded_line) + "): two runs interleaved in this file");
    if (!cur_.run.test_name.empty() && cur_.run.test_name != info.text && cur_.starting_line > 0)
      fail(no, "'Collective test concluded: " + info.text + "' ends a run that started as " +
                   cur_.run.test_name + " (line " + std::to_string(cur_.starting_line) + ")");
    cur_.concluded_line = no;
    cur_.closed = true;
  }

  void failure(const LineInfo& info, long no) {
    if (!cur_.active || cur_.closed) {
      if (cur_.active && cur_.run.failure) return;
      begin_run_if_needed(no, "failure line");
    }
    if (!cur_.run.failure) cur_.run.failure = RunFailure{no, info.text};
    cur_.closed = true;
  }

  std::string_view text_;
  std::string file_;
  ParsedLog out_;
  Open cur_;
  std::optional<ForcedSetting> env_algo_, env_proto_;
  std::string command_test_name_;
  long command_test_line_ = 0;
  int nccl_warnings_ = 0, noise_rows_ = 0;
};

}  // namespace

ParsedLog parse_text_log(std::string_view text, const std::string& file) {
  return TextLogParser(text, file).parse();
}

}  // namespace ncclbot::nccl_tests
