#include "ncclbot/hipipe/byte_size.hpp"

#include <cctype>
#include <limits>

#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::hipipe {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::string_view digits = text;
  std::size_t end = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  digits = text.substr(0, end);
  std::string_view suffix = text.substr(end);
  const auto value = parse_uint(digits);
  if (!value) return std::nullopt;
  std::uint64_t scale = 1;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K':
        scale = 1ULL << 10;
        break;
      case 'M':
        scale = 1ULL << 20;
        break;
      case 'G':
        scale = 1ULL << 30;
        break;
      case 'T':
        scale = 1ULL << 40;
        break;
      case 'B':
        scale = 1;
        break;
      default:
        return std::nullopt;
    }
    std::string_view rest = suffix.substr(std::toupper(static_cast<unsigned char>(suffix[0])) == 'B' ? 0 : 1);
    if (rest != "" && rest != "B" && rest != "b" && rest != "iB" && rest != "ib") return std::nullopt;
  }
  if (*value > std::numeric_limits<std::uint64_t>::max() / scale) return std::nullopt;
  return *value * scale;
}

}  // namespace ncclbot::hipipe
