#pragma once
// A text file saved by a spreadsheet or an editor on Windows may begin with UTF-8's byte order mark,
// which is no part of its first field: readers of text formats skip it.
#include <string_view>

namespace ncclbot {

inline std::string_view without_utf8_bom(std::string_view text) {
  return text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
}

}  // namespace ncclbot
