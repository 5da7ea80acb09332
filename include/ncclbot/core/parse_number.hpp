#pragma once
// Strict number parsing for text inputs: the whole token must be consumed, no overflow, no empty
// tokens. Returns nullopt instead of throwing so callers can attach file:line to their error.
#include <cstdint>
#include <optional>
#include <string_view>

namespace ncclbot {

std::optional<int64_t> parse_int(std::string_view s);
std::optional<uint64_t> parse_uint(std::string_view s);
// Accepts decimal and exponent forms ("1.6e+07"), also "nan"/"inf" (callers decide if allowed).
std::optional<double> parse_double(std::string_view s);
std::optional<float> parse_float(std::string_view s);

// Shortest text that reads back to exactly the same value (std::to_chars).
std::string format_float(float v);
std::string format_double(double v);

}  // namespace ncclbot
