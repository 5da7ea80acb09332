#include "ncclbot/io/atomic_file.hpp"

#include "ncclbot/io/output_file.hpp"

namespace ncclbot {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_output_file(path, bytes, "");
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  return read_input_file_if_exists(path, kMaxPartialBytes);
}

}  // namespace ncclbot
