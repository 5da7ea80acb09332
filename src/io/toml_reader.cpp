#include "io/toml_reader.hpp"

#include <cmath>
#include <optional>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot {

toml::table TomlReader::parse(std::string_view text) const {
  try {
    return toml::parse(text, path_);
  } catch (const toml::parse_error& e) {
    throw InputError(path_, static_cast<long>(e.source().begin.line), std::string(e.description()));
  }
}

toml::table TomlReader::parse_file() const {
  return parse(read_input_file(path_, kMaxConfigBytes));
}

void TomlReader::fail(long line, const std::string& reason) const {
  throw InputError(path_, line, reason);
}

void TomlReader::fail(const toml::node& at, const std::string& reason) const {
  throw InputError(path_, toml_line(at), reason);
}

const toml::node& TomlReader::need(const toml::table& t, std::string_view key,
                                   const std::string& missing_reason) const {
  const toml::node* n = t.get(key);
  if (!n) fail(t, missing_reason);
  return *n;
}

void TomlReader::only_keys(const toml::table& t, const std::string& where,
                           std::initializer_list<const char*> allowed) const {
  for (const auto& [key, value] : t) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key.str() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      fail(value, "unknown key " + quoted_value(key.str()) + " in " + where + " (valid: " + list + ")");
    }
  }
}

std::string TomlReader::string(const toml::node& n, const std::string& what) const {
  if (auto v = n.value_exact<std::string>()) return *v;
  fail(n, what + " must be a string");
}

int64_t TomlReader::integer(const toml::node& n, const std::string& what) const {
  if (auto v = n.value_exact<int64_t>()) return *v;
  fail(n, what + " must be an integer");
}

int64_t TomlReader::integer(const toml::node& n, const std::string& what, int64_t lo, int64_t hi) const {
  const int64_t v = integer(n, what);
  if (v < lo || v > hi)
    fail(n, what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

double TomlReader::number(const toml::node& n, const std::string& what) const {
  std::optional<double> v = n.value_exact<double>();
  if (!v) {
    if (auto i = n.value_exact<int64_t>()) v = double(*i);
  }
  if (!v || !std::isfinite(*v)) fail(n, what + " must be a number");
  return *v;
}

double TomlReader::number(const toml::node& n, const std::string& what, double lo, double hi,
                          bool open_low) const {
  const double v = number(n, what);
  if (v > hi || v < lo || (open_low && v == lo))
    fail(n, what + " must be in " + std::string(open_low ? "(" : "[") + format_double(lo) + ", " +
                format_double(hi) + "]");
  return v;
}

bool TomlReader::boolean(const toml::node& n, const std::string& what) const {
  if (auto v = n.value_exact<bool>()) return *v;
  fail(n, what + " must be true or false");
}

const toml::array& TomlReader::array(const toml::node& n, const std::string& what) const {
  if (const auto* a = n.as_array()) return *a;
  fail(n, what + " must be an array");
}

const toml::table& TomlReader::table(const toml::node& n, const std::string& what) const {
  if (const auto* t = n.as_table()) return *t;
  fail(n, what + " must be a table");
}

}  // namespace ncclbot
