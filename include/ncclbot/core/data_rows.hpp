#pragma once
// The rows of a small comma-separated data table that the library compiles in (data/*.csv): lines
// starting with # are comments and blank lines are skipped; the first other line must be `header`
// exactly; every later line is split on commas and handed to `row(line_no, line, fields)`. A missing or
// different header is an InputError naming `path` and the line.
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/error.hpp"

namespace ncclbot {

template <typename Row>
void for_each_data_row(std::string_view text, std::string_view header, const std::string& path, Row&& row) {
  bool seen_header = false;
  long line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (!seen_header) {
      if (line != header)
        throw InputError(path, line_no,
                         "the header must be '" + std::string(header) + "', not '" + std::string(line) + "'");
      seen_header = true;
      continue;
    }
    std::vector<std::string_view> fields;
    size_t from = 0;
    while (true) {
      const size_t comma = line.find(',', from);
      fields.push_back(
          line.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    row(line_no, line, fields);
  }
  if (!seen_header) throw InputError(path, 0, "no '" + std::string(header) + "' header");
}

}  // namespace ncclbot
