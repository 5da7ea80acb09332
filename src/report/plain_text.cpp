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

// Length of the Unicode format character at s[i] that reorders or breaks what a reader sees: the
// bidi controls U+061C, U+200E-F, U+202A-E, U+2066-9 (a name could show reversed) and the
// separators U+2028-9, written as a space or newline; 0 when none starts there.
size_t invisible_format(const std::string& s, size_t i, bool& is_separator) {
  auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  is_separator = false;
  if (at(i) == 0xd8 && at(i + 1) == 0x9c) return 2;
  if (at(i) != 0xe2) return 0;
  const unsigned b1 = at(i + 1), b2 = at(i + 2);
  if (b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae))) return 3;
  if (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9) return 3;
  if (b1 == 0x80 && (b2 == 0xa8 || b2 == 0xa9)) {
    is_separator = true;
    return 3;
  }
  return 0;
}

}  // namespace

std::string printable_text(const std::string& s, bool multiline) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    bool separator = false;
    if (const size_t n = ansi_sequence(s, i)) {
      i += n - 1;
    } else if (const size_t m = invisible_format(s, i, separator)) {
      i += m - 1;
      if (separator) out += multiline ? '\n' : ' ';
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
