#pragma once
// JSON documents given to `ncclbot stats` (stdin or --input FILE), read strictly: a parse error names
// the source, line and column; a missing, mistyped, non-finite or unknown field names the field.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ncclbot::cli {

class JsonInput {
 public:
  // Reads `path` ("" or "-" = standard input, reported as "<stdin>") and parses one JSON object.
  static JsonInput read(const std::string& path);
  // Parses `text` already read from `source` (used by tests and by read()).
  static JsonInput parse(const std::string& text, std::string source);

  const std::string& source() const { return source_; }
  const nlohmann::json& doc() const { return doc_; }
  bool has(const char* key) const { return doc_.contains(key) && !doc_[key].is_null(); }

  // Fails unless every key of the document is in `allowed` (catches typos such as "resample").
  void only_fields(std::initializer_list<const char*> allowed) const;

  // A non-empty list of finite numbers. With allow_null, null entries become NaN.
  std::vector<double> numbers(const char* key, bool allow_null = false) const;
  double number(const char* key, std::optional<double> fallback = std::nullopt) const;
  int64_t integer(const char* key, std::optional<int64_t> fallback = std::nullopt,
                  int64_t min = INT64_MIN) const;
  uint64_t unsigned_integer(const char* key, std::optional<uint64_t> fallback = std::nullopt) const;
  std::string text(const char* key, std::optional<std::string> fallback = std::nullopt) const;

  [[noreturn]] void fail(const std::string& reason) const;

 private:
  std::string source_;
  nlohmann::json doc_;
};

// JSON value of a double: null for NaN (JSON has no NaN), the number otherwise.
nlohmann::json json_number(double v);

}  // namespace ncclbot::cli
