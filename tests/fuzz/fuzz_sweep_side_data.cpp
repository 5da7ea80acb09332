// libFuzzer target: a sweep's side file (NAME.sweep.toml) is either refused with an InputError or
// read, and then the text written for what was read reads back as the same dynamics.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_side_data.hpp"

using namespace ncclbot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  SweepDynamics d;
  try {
    d = parse_sweep_side_data(text, "fuzz.sweep.toml");
  } catch (const InputError&) {
    return 0;
  }
  const std::string again = sweep_side_data_text(d);
  if (!again.empty() && !(parse_sweep_side_data(again, "fuzz-roundtrip.sweep.toml") == d)) std::abort();
  return 0;
}
