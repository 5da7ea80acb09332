#include "ncclbot/io/nccl_tests/log.hpp"

#include "ncclbot/io/output_file.hpp"

#include <cstring>
#include <fstream>
#include <vector>

#include "io/nccl_tests/text_log_parser.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::nccl_tests {

std::string Diagnostic::text() const {
  return (line > 0 ? file + ":" + std::to_string(line) : file) + ": " + message;
}

ParsedLog parse_log(std::string_view text, const std::string& file) {
  if (text.find('\0') != std::string_view::npos)
    throw InputError(file, 0, "binary data (NUL bytes): not an nccl-tests log");
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw InputError(file, 0, "empty file: no nccl-tests output");
  ParsedLog log = text[first] == '{' ? parse_json_log(text, file) : parse_text_log(text, file);
  if (log.runs.empty()) throw InputError(file, 0, "no nccl-tests results table found");
  return log;
}

ParsedLog read_log(const std::string& path) {
  return parse_log(read_log_bytes(path), path);
}

std::string read_log_bytes(const std::string& path) {
  InputFile file(path, kMaxLogBytes);
  std::istream& in = file.stream();
  // Read in chunks with a cap, so a device (/dev/zero), a pipe or a runaway file fails with a
  // clear line instead of growing without bound; binary data is refused at its first chunk.
  std::string text;
  std::vector<char> chunk(size_t(1) << 16);
  while (in) {
    in.read(chunk.data(), std::streamsize(chunk.size()));
    const size_t got = size_t(in.gcount());
    if (got == 0) break;
    if (std::memchr(chunk.data(), '\0', got))
      throw InputError(path, 0, "binary data (NUL bytes): not an nccl-tests log");
    if (text.size() + got > kMaxLogBytes)
      throw InputError(path, 0,
                       "larger than " + std::to_string(kMaxLogBytes >> 20) +
                           " MiB: not one nccl-tests log (split it, or check the path)");
    text.append(chunk.data(), got);
  }
  if (in.bad()) throw InputError(path, 0, "cannot read file");
  return text;
}

std::optional<Collective> collective_of_test(std::string_view test_name) {
  constexpr std::string_view suffix = "_perf";
  if (test_name.size() <= suffix.size() || test_name.substr(test_name.size() - suffix.size()) != suffix)
    return std::nullopt;
  const std::string_view base = test_name.substr(0, test_name.size() - suffix.size());
  // parse_collective folds '_' away, so "all_reduce" and "alltoall" find AllReduce and AlltoAll;
  // a test such as "hypercube" or "alltoallv" is not one NCCL collective and stays unknown.
  return parse_collective(base);
}

}  // namespace ncclbot::nccl_tests
