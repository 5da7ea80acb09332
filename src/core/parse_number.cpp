#include "ncclbot/core/parse_number.hpp"

#include <charconv>
#include <string>
#include <system_error>

namespace ncclbot {
namespace {

template <typename T>
std::optional<T> parse_whole(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);  // from_chars rejects a leading '+'
  if (s.empty()) return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

template <typename T>
std::string format_shortest(T v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

}  // namespace

std::optional<int64_t> parse_int(std::string_view s) { return parse_whole<int64_t>(s); }

std::optional<uint64_t> parse_uint(std::string_view s) {
  if (!s.empty() && s.front() == '-') return std::nullopt;
  return parse_whole<uint64_t>(s);
}

std::optional<double> parse_double(std::string_view s) { return parse_whole<double>(s); }
std::optional<float> parse_float(std::string_view s) { return parse_whole<float>(s); }

std::string format_float(float v) { return format_shortest(v); }
std::string format_double(double v) { return format_shortest(v); }

}  // namespace ncclbot
