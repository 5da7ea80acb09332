#pragma once
#include <string_view>

namespace ncclbot {
inline constexpr std::string_view kVersion = "0.1.0";
}
