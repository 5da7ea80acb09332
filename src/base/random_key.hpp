#pragma once
// A fresh random key as lower-case hex: 32 bytes from the kernel's getrandom, 64 characters. The
// leader's secret of `ncclbot secret` and of `plugin-check --ranks` alike.
#include <string>

namespace ncclbot {

// std::runtime_error naming getrandom's error when the kernel gives no randomness.
std::string random_hex_key();

}  // namespace ncclbot
