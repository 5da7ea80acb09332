#pragma once
// Launchers decorate every line of a job's output; the table underneath is the same.
#include <string_view>

namespace ncclbot::nccl_tests {

// Removes, in this order: a trailing '\r'; mpirun --timestamp-output / --tag-output prefixes
// ("Thu Jul 18 15:41:05 2024<stdout>:", "[1,0]<stdout>:"); an srun -l task prefix ("0: ").
std::string_view strip_launcher_prefix(std::string_view line);

}  // namespace ncclbot::nccl_tests
