#pragma once
// Writing a file so that a reader (or a rerun after kill -9) sees either the old content or the
// complete new one, never a torn write: write a temporary in the same folder, flush, rename.
#include <optional>
#include <string>
#include <string_view>

namespace ncclbot::study {

void write_file_atomic(const std::string& path, std::string_view bytes);
// The whole file, or nullopt when it does not exist.
std::optional<std::string> read_file_if_exists(const std::string& path);

}  // namespace ncclbot::study
