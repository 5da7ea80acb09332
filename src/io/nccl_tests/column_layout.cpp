#include "io/nccl_tests/column_layout.hpp"

#include <algorithm>
#include <vector>

#include "io/nccl_tests/printed_number.hpp"

namespace ncclbot::nccl_tests {
namespace {

bool is_time_label(std::string_view t) {
  return t == "time" || t == "cputime";
}
bool is_wrong_label(std::string_view t) {
  return t == "#wrong" || t == "wrong" || t == "error" || t == "res";
}

}  // namespace

HeaderLine parse_column_header(std::string_view line) {
  while (!line.empty() && (line.front() == '#' || line.front() == ' ' || line.front() == '\t'))
    line.remove_prefix(1);
  const std::vector<std::string_view> tok = split_whitespace(line);
  HeaderLine out;
  if (tok.empty() || (tok[0] != "size" && tok[0] != "bytes")) return out;
  if (std::find(tok.begin(), tok.end(), "algbw") == tok.end()) return out;
  out.is_header = true;

  ColumnLayout layout;
  layout.time_in_ms = tok[0] == "bytes";
  size_t k = 0;
  for (; k < tok.size() && !is_time_label(tok[k]); ++k) {
    const std::string_view t = tok[k];
    int* slot = nullptr;
    if (t == "size" || t == "bytes")
      slot = &layout.size;
    else if (t == "count" || t == "N")
      slot = &layout.count;
    else if (t == "type")
      slot = &layout.type;
    else if (t == "redop" || t == "op")
      slot = &layout.redop;
    else if (t == "root")
      slot = &layout.root;
    if (!slot || *slot >= 0) {
      out.error = "unrecognised column '" + std::string(t) + "' in the column header";
      return out;
    }
    *slot = int(k);
  }
  if (layout.size < 0 || layout.count < 0 || layout.type < 0) {
    out.error = "column header lacks size, count or type";
    return out;
  }
  for (int placement = 0; placement < 2 && k < tok.size() && is_time_label(tok[k]); ++placement) {
    if (k + 4 > tok.size() || tok[k + 1] != "algbw" || tok[k + 2] != "busbw" || !is_wrong_label(tok[k + 3])) {
      out.error = "column header: expected 'time algbw busbw #wrong' at column " + std::to_string(k + 1);
      return out;
    }
    layout.cpu_time = layout.cpu_time || tok[k] == "cputime";
    layout.wrong_is_deviation = tok[k + 3] == "error" || tok[k + 3] == "res";
    PlacementColumns& p = placement == 0 ? layout.out_of_place : layout.in_place;
    p = {int(k), int(k + 1), int(k + 2), int(k + 3)};
    k += 4;
    // -I 1: per-iteration statistics follow each placement's #wrong.
    if (k + 4 <= tok.size() && tok[k] == "i_min" && tok[k + 1] == "i_max" && tok[k + 2] == "i_p99" &&
        tok[k + 3] == "i_cv%") {
      p.i_min = int(k), p.i_max = int(k + 1), p.i_p99 = int(k + 2), p.i_cv = int(k + 3);
      k += 4;
    }
    if (placement == 1) layout.has_in_place = true;
  }
  if (layout.out_of_place.time < 0) {
    out.error = "column header has no time column";
    return out;
  }
  layout.columns = int(k);
  if (k < tok.size() && tok[k] == "timestamp") {
    layout.timestamp = true;
    layout.columns += 2;
    ++k;
  }
  if (k != tok.size()) {
    out.error = "unrecognised column '" + std::string(tok[k]) + "' in the column header";
    return out;
  }
  out.layout = layout;
  return out;
}

}  // namespace ncclbot::nccl_tests
