#pragma once
// The study runner's own files (checkpoints, reports): written atomically and read with a size cap,
// through the shared rules of ncclbot/io/output_file.hpp.
#include <optional>
#include <string>
#include <string_view>

namespace ncclbot {

// Temporary + rename; a failure is a UsageError naming the path.
void write_file_atomic(const std::string& path, std::string_view bytes);
// The whole file, or nullopt when it does not exist; larger than kMaxPartialBytes is an InputError.
std::optional<std::string> read_file_if_exists(const std::string& path);

}  // namespace ncclbot
