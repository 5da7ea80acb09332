// libFuzzer target: the JSON input of `ncclbot stats`. The first byte picks the test, the rest is
// the document. Every input must end in a JSON answer or in one of the errors the command turns
// into exit 2 (InputError, UsageError, std::invalid_argument); anything else (a JSON type error, a
// Boost domain error, a crash) is a bug. Documents asking for heavy work are skipped to keep runs
// fast; the caps themselves are tested in tests/cli.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cli/json_input.hpp"
#include "cli/stats_handlers.hpp"
#include "ncclbot/core/error.hpp"

using namespace ncclbot;

namespace {

bool heavy(const nlohmann::json& doc) {
  for (const auto& [key, value] : doc.items()) {
    if (value.is_array() && value.size() > 200) return true;
    if (key == "resamples" && value.is_number() && !(value.get<double>() <= 2000)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& tests = cli::stats_tests();
  const cli::StatsTest& test = tests[data[0] % tests.size()];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const cli::JsonInput in = cli::JsonInput::parse(text, "fuzz.json");
    if (heavy(in.doc())) return 0;
    const nlohmann::json out = test.run(in, cli::StatsRunOptions{1});
    (void)out.dump();  // the answer must serialise (no invalid UTF-8 echoed back, ...)
  } catch (const InputError&) {
  } catch (const UsageError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
