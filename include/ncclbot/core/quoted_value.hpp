#pragma once
// A user's value quoted in a one-line error message. A short one is shown whole; a long one (a
// 200 KB key, a 300-digit number) by its first characters and its length, so the line stays short.
#include <string>
#include <string_view>

namespace ncclbot {

inline constexpr size_t kQuotedValueChars = 60;

// 'text', or 'first 60 characters…' (N bytes).
inline std::string quoted_value(std::string_view text) {
  // Appended piece by piece: GCC 12's -Wrestrict misreads "'" + std::string(...) once inlined.
  std::string out(1, '\'');
  if (text.size() <= kQuotedValueChars + 20) return out.append(text).append(1, '\'');
  size_t keep = kQuotedValueChars;
  // Cut at a character boundary: never inside a UTF-8 sequence.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return out.append(text.substr(0, keep))
      .append("\u2026' (")
      .append(std::to_string(text.size()))
      .append(" bytes)");
}

}  // namespace ncclbot
