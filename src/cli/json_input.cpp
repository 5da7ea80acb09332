#include "cli/json_input.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot::cli {

JsonInput JsonInput::read(const std::string& path) {
  if (path.empty() || path == "-")
    return parse(read_input_stream(command_in(), "<stdin>", kMaxJsonInputBytes), "<stdin>");
  return parse(read_input_file(path, kMaxJsonInputBytes), path);
}

JsonInput JsonInput::parse(const std::string& text, std::string source) {
  JsonInput in;
  in.source_ = std::move(source);
  // A field given twice would be read as its last value, silently: refused, as TOML's are.
  std::vector<std::set<std::string>> keys_of_open_objects;
  const auto no_field_twice = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys_of_open_objects.emplace_back();
    if (event == Event::object_end) keys_of_open_objects.pop_back();
    if (event == Event::key && !keys_of_open_objects.back().insert(parsed.get<std::string>()).second)
      throw InputError(in.source_, 0, "field " + quoted_value(parsed.get<std::string>()) + " given twice");
    return true;
  };
  try {
    in.doc_ = nlohmann::json::parse(text, no_field_twice);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const size_t at = std::min(text.size(), e.byte == 0 ? size_t(0) : size_t(e.byte - 1));
    const long line = 1 + long(std::count(text.begin(), text.begin() + long(at), '\n'));
    const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column = at - (line_start == std::string::npos || at == 0 ? 0 : line_start + 1) + 1;
    std::string reason =
        "invalid JSON at byte " + std::to_string(e.byte) + " (column " + std::to_string(column) + ")";
    // NaN/Infinity are the usual culprits (Python's json.dumps writes them); say so plainly.
    const size_t word = text.find_last_of(",[:{ \n\t", at == 0 ? 0 : at - 1);
    const std::string tail = text.substr(word == std::string::npos ? 0 : word + 1, 9);
    if (tail.rfind("NaN", 0) == 0 || tail.rfind("Infinity", 0) == 0 || tail.rfind("-Infinity", 0) == 0 ||
        tail.rfind("nan", 0) == 0 || tail.rfind("inf", 0) == 0)
      reason += ": NaN and Infinity are not JSON numbers and are not accepted here";
    else if (text.find_first_not_of(" \t\r\n") == std::string::npos)
      reason = "empty input: expected a JSON object";
    throw InputError(in.source_, line, reason);
  } catch (const nlohmann::json::exception& e) {
    // Anything else the parser rejects, e.g. 1e400 ("number overflow"): still the input's fault.
    throw InputError(in.source_, 0, std::string("invalid JSON: ") + e.what());
  }
  if (!in.doc_.is_object())
    throw InputError(in.source_, 0, "expected a JSON object, e.g. {\"p\": [0.01, 0.04]}");
  return in;
}

void JsonInput::fail(const std::string& reason) const {
  throw InputError(source_, 0, reason);
}

void JsonInput::only_fields(std::initializer_list<const char*> allowed) const {
  for (const auto& item : doc_.items()) {
    // A plain reference, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string& key = item.key();
    const bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; });
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      fail("unknown field \"" + key + "\" (expected: " + list + ")");
    }
  }
}

std::vector<double> JsonInput::numbers(const char* key, bool allow_null) const {
  if (!doc_.contains(key)) fail(std::string("missing field \"") + key + "\"");
  const auto& v = doc_[key];
  if (!v.is_array()) fail(std::string("\"") + key + "\" must be a list of numbers");
  if (v.empty()) fail(std::string("\"") + key + "\" is empty: need at least one value");
  std::vector<double> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& e = v[i];
    const std::string where = std::string("\"") + key + "\"[" + std::to_string(i) + "]";
    if (e.is_null() && allow_null) {
      out.push_back(std::nan(""));
      continue;
    }
    if (e.is_string()) {
      const auto& s = e.get_ref<const std::string&>();
      if (s == "NaN" || s == "nan" || s == "Infinity" || s == "-Infinity" || s == "inf" || s == "-inf")
        fail(where + " is " + s + ": only finite numbers are accepted" +
             (allow_null ? " (null marks an untested hypothesis)" : ""));
    }
    if (!e.is_number()) fail(where + " is not a number" + (allow_null ? " (or null)" : ""));
    const double d = e.get<double>();
    if (!std::isfinite(d)) fail(where + " is not finite");
    out.push_back(d);
  }
  // Every statistic here sums the values (means, flipped sums, bootstrap means): a sum that
  // overflows would come back as a null statistic with exit 0, so it is refused up front.
  double total = 0.0;
  for (double d : out)
    if (!std::isnan(d)) total += std::abs(d);
  if (!std::isfinite(total))
    fail(std::string("\"") + key +
         "\": the values are too large (their sum overflows a double); rescale them");
  return out;
}

double JsonInput::number(const char* key, std::optional<double> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    fail(std::string("missing field \"") + key + "\"");
  }
  const auto& v = doc_[key];
  if (!v.is_number()) fail(std::string("\"") + key + "\" must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(std::string("\"") + key + "\" is not finite");
  return d;
}

int64_t JsonInput::integer(const char* key, std::optional<int64_t> fallback, int64_t min) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    fail(std::string("missing field \"") + key + "\"");
  }
  const auto& v = doc_[key];
  int64_t out = 0;
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
             std::abs(v.get<double>()) < 9e15) {
    out = int64_t(v.get<double>());
  } else {
    fail(std::string("\"") + key + "\" must be an integer");
  }
  if (out < min)
    fail(std::string("\"") + key + "\" must be >= " + std::to_string(min) + ", got " + std::to_string(out));
  return out;
}

uint64_t JsonInput::unsigned_integer(const char* key, std::optional<uint64_t> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    fail(std::string("missing field \"") + key + "\"");
  }
  const auto& v = doc_[key];
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) fail(std::string("\"") + key + "\" must be >= 0");
  if (v.is_number_float() && v.get<double>() >= 0 && std::floor(v.get<double>()) == v.get<double>() &&
      v.get<double>() < 1.8e19)
    return uint64_t(v.get<double>());
  fail(std::string("\"") + key + "\" must be a non-negative integer");
}

std::string JsonInput::text(const char* key, std::optional<std::string> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    fail(std::string("missing field \"") + key + "\"");
  }
  const auto& v = doc_[key];
  if (!v.is_string()) fail(std::string("\"") + key + "\" must be a string");
  return v.get<std::string>();
}

nlohmann::json json_number(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

}  // namespace ncclbot::cli
