#pragma once
// NCCL versions as the user and the data tables name them: MAJOR.MINOR ("2.32"), compared as numbers.
#include <string>
#include <string_view>

namespace ncclbot {

// "2.32" from "2.32", "2.32.3" or "v2.32.3-1"; a UsageError naming the option for anything else.
std::string nccl_minor_version(std::string_view text, std::string_view option);

// MAJOR.MINOR when `text` is exactly two dot-separated runs of digits, else empty.
std::string exact_minor_version(std::string_view text);

// Whether MAJOR.MINOR `version` (as nccl_minor_version returns it) is `major`.`minor` or later.
bool nccl_version_at_least(std::string_view version, int major, int minor);

}  // namespace ncclbot
