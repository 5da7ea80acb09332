#include "io/nccl_tests/printed_number.hpp"

#include <cctype>
#include <cmath>

#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::nccl_tests {

std::vector<std::string_view> split_whitespace(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_all_digits(std::string_view token) {
  if (token.empty()) return false;
  for (char ch : token)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

std::optional<PrintedNumber> parse_printed_number(std::string_view token) {
  // Only the characters printf's %f / %e / %g produce; this also keeps "nan", "inf" and hex out.
  for (char ch : token)
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
          ch == '-'))
      return std::nullopt;
  const auto value = parse_double(token);
  if (!value || !std::isfinite(*value) || *value < 0.0) return std::nullopt;
  const size_t e = token.find_first_of("eE");
  const std::string_view mantissa = token.substr(0, e);
  int exponent = 0;
  if (e != std::string_view::npos) {
    const auto parsed = parse_int(token.substr(e + 1));
    if (!parsed || *parsed < -400 || *parsed > 400) return std::nullopt;
    exponent = int(*parsed);
  }
  const size_t dot = mantissa.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : int(mantissa.size() - dot - 1);
  return PrintedNumber{*value, 0.5 * std::pow(10.0, double(exponent - decimals))};
}

}  // namespace ncclbot::nccl_tests
