#pragma once
// Where the third-party nccl-tests logs are, found when a test runs rather than when it is built, so
// one build runs with or without them: $NCCLBOT_SHARED_DIR/data/nccl-tests/, by default the folder
// beside the clone. The logs are not part of the repository; a test that reads them skips, with one
// line saying where it looked, when they are not there (their quirks are covered by the project's
// own fixtures in tests/data/nccl-tests either way).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace ncclbot::test {

// The value of environment variable `name`, or `fallback` when it is unset or empty (as the
// scripts' `${VAR:-default}` reads it).
inline std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

// The folder of the third-party nccl-tests logs, ending in '/'. A set variable is used as given,
// even when it names no folder: pointing it elsewhere must never fall back to the default.
inline std::string shared_logs_dir() {
  const std::string shared = env_or("NCCLBOT_SHARED_DIR", NCCLBOT_SOURCE_DIR "/../shared");
  return shared + "/data/nccl-tests/";
}

// Why a test that reads `names` from the shared folder cannot run (the folder is absent, or holds
// none of them), as one line; empty when it can. A folder holding only some of them is not a reason
// to skip: the test then fails on the missing file, which is a broken copy, not an absent one.
inline std::string shared_logs_absent(const std::vector<std::string>& names) {
  const std::string dir = shared_logs_dir();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return "no third-party nccl-tests logs in " + dir + " (no such folder; set NCCLBOT_SHARED_DIR)";
  for (const std::string& name : names)
    if (std::filesystem::exists(dir + name, ec)) return "";
  const std::string lacking =
      names.size() == 1 ? names[0] + " is not there"
                        : "none of the " + std::to_string(names.size()) + " logs this test reads is there";
  return "no third-party nccl-tests logs in " + dir + " (" + lacking + "; set NCCLBOT_SHARED_DIR)";
}

}  // namespace ncclbot::test

// Skips the current test, with the one-line reason, when the shared folder lacks every log named.
// A macro because GTEST_SKIP() must return from the test body itself.
#define NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(...)                                                       \
  do {                                                                                              \
    if (const std::string ncclbot_skip_reason = ::ncclbot::test::shared_logs_absent({__VA_ARGS__}); \
        !ncclbot_skip_reason.empty())                                                               \
      GTEST_SKIP() << ncclbot_skip_reason;                                                          \
  } while (false)
