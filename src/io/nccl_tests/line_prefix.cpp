#include "io/nccl_tests/line_prefix.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace ncclbot::nccl_tests {

std::string_view strip_launcher_prefix(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // mpirun tags a line with "<stdout>:" or "<stderr>:" after its own decoration (rank, date).
  for (std::string_view tag : std::array<std::string_view, 2>{"<stdout>:", "<stderr>:"}) {
    const size_t at = line.find(tag);
    if (at != std::string_view::npos && at < 64) {
      line.remove_prefix(at + tag.size());
      break;
    }
  }
  // srun -l: "<task>: " before the text. A data row never starts with "<digits>:".
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  size_t digits = 0;
  while (i + digits < line.size() && std::isdigit(static_cast<unsigned char>(line[i + digits])) && digits < 7)
    ++digits;
  if (digits > 0 && i + digits < line.size() && line[i + digits] == ':' &&
      (i + digits + 1 == line.size() || line[i + digits + 1] == ' '))
    line.remove_prefix(std::min(line.size(), i + digits + 2));
  return line;
}

}  // namespace ncclbot::nccl_tests
