#include "report/plain_text.hpp"

namespace ncclbot::report {
namespace {

// Length of the ANSI control sequence at s[i] (ESC '[' parameters, intermediates, final byte), 0
// when none starts there.
size_t ansi_sequence(const std::string& s, size_t i) {
  if (s[i] != '\x1b' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  size_t j = i + 2;
  while (j < s.size() && s[j] >= 0x20 && s[j] <= 0x3f) ++j;
  return j < s.size() && s[j] >= 0x40 && s[j] <= 0x7e ? j + 1 - i : j - i;
}

}  // namespace

std::string printable_text(const std::string& s, bool multiline) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (const size_t n = ansi_sequence(s, i)) {
      i += n - 1;
    } else if (c == '\n') {
      out += multiline ? '\n' : ' ';
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      ++i;  // a C1 control in UTF-8
    } else if ((c >= 0x20 && c != 0x7f) || c == '\t') {
      out += char(c);
    }
  }
  return out;
}

}  // namespace ncclbot::report
