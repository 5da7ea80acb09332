#pragma once
// The one strict TOML reader of ncclbot's input files: fabric presets (sim/), HiPIPE presets and
// studies (hipipe/), study files and their variants (study/), nccl-tests manifests (io/) and
// campaign manifests (campaign/). It parses with the syntax error's line, and reads typed values
// out of toml++ nodes; every mistake is an InputError "FILE:LINE: reason". The getters take `what`,
// the name the message gives the value ("study.horizon", "'nic_bw'"), so each format keeps its own
// words:  WHAT must be a string | an integer | a number | true or false | an array | a table,
// and, with bounds, WHAT must be in [lo, hi].
#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace ncclbot {

// The line a TOML node starts on (0 when toml++ knows none).
inline long toml_line(const toml::node& n) {
  return static_cast<long>(n.source().begin.line);
}

class TomlReader {
 public:
  explicit TomlReader(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // The document in `text`, or in the file at path() (read as every input file is: a regular file
  // of at most kMaxConfigBytes, io/output_file.hpp); a syntax error names its line.
  toml::table parse(std::string_view text) const;
  toml::table parse_file() const;

  [[noreturn]] void fail(long line, const std::string& reason) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& reason) const;

  const toml::node* find(const toml::table& t, std::string_view key) const { return t.get(key); }
  // The value under `key`; missing: `missing_reason` at the table's line.
  const toml::node& need(const toml::table& t, std::string_view key, const std::string& missing_reason) const;
  // A key of `t` not in `allowed`: "unknown key 'K' in WHERE (valid: a, b, ...)" at its line.
  void only_keys(const toml::table& t, const std::string& where,
                 std::initializer_list<const char*> allowed) const;

  std::string string(const toml::node& n, const std::string& what) const;
  int64_t integer(const toml::node& n, const std::string& what) const;
  int64_t integer(const toml::node& n, const std::string& what, int64_t lo, int64_t hi) const;
  // An integer or a floating-point value, finite.
  double number(const toml::node& n, const std::string& what) const;
  // With bounds: [lo, hi], or (lo, hi] when open_low.
  double number(const toml::node& n, const std::string& what, double lo, double hi,
                bool open_low = false) const;
  bool boolean(const toml::node& n, const std::string& what) const;
  const toml::array& array(const toml::node& n, const std::string& what) const;
  const toml::table& table(const toml::node& n, const std::string& what) const;

 private:
  std::string path_;
};

}  // namespace ncclbot
