// libFuzzer target: the fabric preset reader (data/fabrics/*.toml) either rejects the bytes with an
// InputError naming the file, or returns a preset whose topology questions are answered or refused
// with a UsageError, never a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/sim/fabric.hpp"

using namespace ncclbot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sim::FabricPreset f;
  try {
    f = sim::parse_fabric(text, "fuzz.toml");
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind("fuzz.toml", 0) != 0) std::abort();
    return 0;
  } catch (const UsageError&) {
    return 0;
  }
  for (int hosts : {1, 2, 4, 18}) try {
      (void)sim::topology_for(f, hosts, f.gpus_per_host);
    } catch (const UsageError&) {
    }
  return 0;
}
