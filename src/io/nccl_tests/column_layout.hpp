#pragma once
// The results table's columns, read from its header line rather than assumed, so every layout
// nccl-tests has printed is one description:
//   2019-2022  size count type [redop] [root] time algbw busbw error  (x2, error a float)
//   2022-      size count type redop root time algbw busbw #wrong  (x2, 13 columns)
//   -I 1       ... #wrong i_min i_max i_p99 i_cv%  (x2, 21 columns)
//   -S         ... timestamp  (rows end with "YYYY-mm-dd HH:MM:SS", two tokens)
//   -C 1       "cputime" instead of "time"
//   2017-2019  bytes N type op time algbw busbw res  (x2, time in ms)
#include <optional>
#include <string>
#include <string_view>

namespace ncclbot::nccl_tests {

struct PlacementColumns {
  int time = -1, algbw = -1, busbw = -1, wrong = -1;
  int i_min = -1, i_max = -1, i_p99 = -1, i_cv = -1;  // -I 1 only
};

struct ColumnLayout {
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  PlacementColumns out_of_place, in_place;
  bool has_in_place = false;
  bool timestamp = false;   // two trailing tokens
  bool time_in_ms = false;  // the 2017-2019 layout
  bool cpu_time = false;
  bool wrong_is_deviation = false;  // "error"/"res": max deviation, not a count of wrong elements
  int columns = 0;                  // tokens in a data row
};

struct HeaderLine {
  bool is_header = false;              // the line is a column header (known or not)
  std::optional<ColumnLayout> layout;  // set when the header is understood
  std::string error;                   // why a header was not understood
};

// `line` has its launcher prefix removed; a leading '#' is optional (one log lost it).
HeaderLine parse_column_header(std::string_view line);

}  // namespace ncclbot::nccl_tests
