// libFuzzer target: the study TOML loader either rejects the bytes with an InputError (or a
// UsageError) naming the file, or returns a study whose names obey the loader's own rules: a sweep
// name never leaves DIR/sweeps/, a variant's folder never leaves DIR/variants/, every name is free
// of control characters, and every variant's study file (the study rewritten with its knobs) loads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ncclbot/core/error.hpp"
#include "study/study_spec.hpp"
#include "study/study_variants.hpp"

using namespace ncclbot;

namespace {

bool printable(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  study::StudySpec s;
  try {
    s = study::parse_study(text, "fuzz.toml");
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind("fuzz.toml", 0) != 0) std::abort();  // must name the file
    return 0;
  } catch (const UsageError&) {
    return 0;
  }
  for (const auto& sw : s.sweeps)
    if (sw.name.empty() || sw.name.find('/') != std::string::npos ||
        sw.name.find("..") != std::string::npos || sw.name.front() == '.' || !printable(sw.name))
      std::abort();
  for (const auto& sc : s.scenarios)
    if (!printable(sc.name)) std::abort();
  for (const auto& p : s.policies)
    if (!printable(p.name)) std::abort();
  if (s.sweeps.empty() || s.scenarios.empty() || s.policies.empty()) std::abort();
  for (const auto& v : s.variants) {
    if (!printable(v.name) || v.slug.empty() || v.slug.find('/') != std::string::npos ||
        v.slug.find("..") != std::string::npos || v.slug.front() == '.')
      std::abort();
    try {
      const study::StudySpec varied = study::variant_study(s, v, "fuzz-out/variants/" + v.slug);
      if (!varied.variants.empty() || varied.sweeps.size() != s.sweeps.size() ||
          varied.scenarios.size() != s.scenarios.size() || varied.policies.size() != s.policies.size() ||
          varied.hypotheses.size() != s.hypotheses.size() || varied.delay != v.delay.value_or(s.delay))
        std::abort();
    } catch (const std::exception&) {
      std::abort();  // a study that loads must give variants that load
    }
  }
  return 0;
}
