#pragma once
// Checks the ingest tests share: an input error's message, and whether a warning was given.
#include <functional>
#include <string>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"

namespace ncclbot::test {

// The InputError message of `f` (empty when it succeeds).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Whether `ws` holds a diagnostic containing `needle` (at `line`, when it is not negative).
inline bool has_warning(const std::vector<nccl_tests::Diagnostic>& ws, const std::string& needle,
                        long line = -1) {
  for (const auto& w : ws)
    if (w.message.find(needle) != std::string::npos && (line < 0 || w.line == line)) return true;
  return false;
}

}  // namespace ncclbot::test
