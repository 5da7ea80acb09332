#include "io/nccl_tests/row_parser.hpp"

#include "io/nccl_tests/printed_number.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/quoted_value.hpp"

namespace ncclbot::nccl_tests {
namespace {

struct RowError {
  std::string reason;
};

PrintedNumber number(std::string_view tok, const char* what) {
  const auto v = parse_printed_number(tok);
  if (!v) throw RowError{std::string(what) + " is not a non-negative number: " + quoted_value(tok)};
  return *v;
}

Measurement measurement(const std::vector<std::string_view>& tok, const PlacementColumns& c, bool time_in_ms,
                        const char* placement) {
  Measurement m;
  if (tok[size_t(c.time)] == "N/A") throw RowError{std::string(placement) + " time is N/A"};
  m.time_us = number(tok[size_t(c.time)], "time");
  if (m.time_us.value <= 0.0) throw RowError{std::string(placement) + " time must be positive"};
  if (time_in_ms) {
    m.time_us.value *= 1e3;
    m.time_us.half_step *= 1e3;
  }
  m.algbw = number(tok[size_t(c.algbw)], "algbw");
  m.busbw = number(tok[size_t(c.busbw)], "busbw");
  const std::string_view wrong = tok[size_t(c.wrong)];
  if (wrong != "N/A") m.wrong = number(wrong, "#wrong").value;
  if (c.i_min >= 0)
    m.iteration_summary =
        IterationSummary{number(tok[size_t(c.i_min)], "i_min"), number(tok[size_t(c.i_max)], "i_max"),
                         number(tok[size_t(c.i_p99)], "i_p99"), number(tok[size_t(c.i_cv)], "i_cv%")};
  if (m.iteration_summary) {
    const IterationSummary& i = *m.iteration_summary;
    if (i.min_us.value - i.min_us.half_step > i.max_us.value + i.max_us.half_step)
      throw RowError{std::string(placement) + " i_min is above i_max"};
  }
  return m;
}

}  // namespace

std::variant<Row, std::string> parse_row(const std::vector<std::string_view>& tok, const ColumnLayout& layout,
                                         long line) {
  if (int(tok.size()) != layout.columns)
    return "expected " + std::to_string(layout.columns) + " columns as in the column header, found " +
           std::to_string(tok.size());
  try {
    Row row;
    row.line = line;
    const auto bytes = parse_uint(tok[size_t(layout.size)]);
    if (!bytes || !is_all_digits(tok[size_t(layout.size)]))
      throw RowError{"size is not a byte count: " + quoted_value(tok[size_t(layout.size)])};
    row.bytes = *bytes;
    const auto count = parse_uint(tok[size_t(layout.count)]);
    if (!count || !is_all_digits(tok[size_t(layout.count)]))
      throw RowError{"count is not an element count: " + quoted_value(tok[size_t(layout.count)])};
    row.count = *count;
    row.type = std::string(tok[size_t(layout.type)]);
    if (parse_printed_number(row.type)) throw RowError{"type is a number: " + quoted_value(row.type)};
    if (layout.redop >= 0) row.redop = std::string(tok[size_t(layout.redop)]);
    if (layout.root >= 0) {
      const auto root = parse_int(tok[size_t(layout.root)]);
      if (!root) throw RowError{"root is not an integer: " + quoted_value(tok[size_t(layout.root)])};
      row.root = *root;
    }
    row.out_of_place = measurement(tok, layout.out_of_place, layout.time_in_ms, "out-of-place");
    if (layout.has_in_place) row.in_place = measurement(tok, layout.in_place, layout.time_in_ms, "in-place");
    if (layout.timestamp) {
      const std::string_view date = tok[tok.size() - 2], clock = tok[tok.size() - 1];
      if (date.size() != 10 || date[4] != '-' || clock.size() != 8 || clock[2] != ':')
        throw RowError{"timestamp is not 'YYYY-mm-dd HH:MM:SS': " + quoted_value(date) + " " +
                       quoted_value(clock)};
    }
    return row;
  } catch (const RowError& e) {
    return e.reason;
  }
}

}  // namespace ncclbot::nccl_tests
