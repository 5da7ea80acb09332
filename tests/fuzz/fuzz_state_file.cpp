// libFuzzer target: the tuner plugin's state file parser. The checksum and the header's policy
// fields are fixed up first (byte 12 picks one of the live policies), so mutations reach the
// per-entry and per-value checks instead of dying on the checksum. Whatever is accepted must
// encode and decode again to the same bytes, and every restored policy must select in its mask.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plugin/state_file.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

const char* const kSpecs[] = {"auto",
                              "random",
                              "greedy:n0=1",
                              "egreedy:eps=0.2,n0=1",
                              "ucb1:c=0.5,n0=8",
                              "thompson:n0=1,sigma=0.1",
                              "etc:m=2",
                              "swucb:c=0.3,window=20,n0=2",
                              "ducb:c=0.3,gamma=0.9,n0=2"};

void put64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + size_t(i)] = char(uint8_t(v >> (8 * i)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::shared_ptr<const PolicyEngine> engines[9];
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t which = size > 12 ? uint8_t(bytes[12]) % 9 : 0;
  if (!engines[which]) {
    std::string error;
    engines[which] = PolicyEngine::create(kSpecs[which], 1, &error);
    if (!engines[which]) std::abort();
  }
  const PolicyEngine& engine = *engines[which];
  if (bytes.size() >= 40) {
    bytes[12] = 0;
    put64(bytes, 16, engine.fingerprint());
    for (int i = 0; i < 4; ++i) bytes[24 + size_t(i)] = char(uint8_t(uint32_t(engine.kind()) >> (8 * i)));
    put64(bytes, bytes.size() - 8, fnv1a64(bytes.data(), bytes.size() - 8));
  }
  StateFile file(engine);
  std::string why;
  if (!file.decode(bytes, &why)) {
    if (why.empty()) std::abort();
    return 0;
  }
  const std::string again = file.encode();
  StateFile second(engine);
  if (!second.decode(again, &why) || second.encode() != again) std::abort();
  for (const StateEntry& e : file.entries()) {
    PolicyState p = e.policy;
    for (uint64_t t = 0; t < 40; ++t) {  // past a full SW-UCB window, so restored rings get evicted
      const int slot = engine.select(p, 11, e.steps + t);
      if (slot != -1 && !ArmMask{e.mask}.has(slot)) std::abort();
      if (slot >= 0) engine.update(p, slot, 5.0 + double(t));
    }
  }
  return 0;
}
