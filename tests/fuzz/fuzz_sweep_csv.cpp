// libFuzzer target: the sweep CSV reader either rejects the bytes with an InputError or accepts
// them, and then writing the sweep and reading it back must give a bit-identical sweep.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"

using namespace ncclbot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Sweep sweep;
  try {
    sweep = parse_sweep_csv(in, "fuzz.csv");
  } catch (const InputError&) {
    return 0;
  }
  // The stream form is the CSV alone: a "# dynamics:" line read in goes to the side file, not back out.
  sweep.set_dynamics(SweepDynamics{});
  std::ostringstream out;
  write_sweep_csv(sweep, out);
  std::istringstream again(out.str());
  if (!parse_sweep_csv(again, "fuzz-roundtrip.csv").identical_to(sweep)) std::abort();
  return 0;
}
