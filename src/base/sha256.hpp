#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: the study file, the sweeps and the
// outputs are recorded by the same digest `sha256sum` prints, so a reader can check them.
#include <string>
#include <string_view>

namespace ncclbot {

std::string sha256_hex(std::string_view bytes);

}  // namespace ncclbot
