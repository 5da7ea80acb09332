#pragma once
// Walks a decision log file written by the plugin (format: include/ncclbot/log/decision_log_format.hpp),
// checking every record's checksum, for the unit tests that read what the plugin logged.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log_format.hpp"

namespace ncclbot::plugin::test {

// f(kind, record bytes) for every record after the header, in file order.
template <typename F>
void for_each_record(const std::string& path, F&& f) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 16u) << path;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t at = decision_log::detail::get<uint32_t>(p, 12);
  while (at + 8 <= bytes.size()) {
    const uint32_t kind = decision_log::detail::get<uint32_t>(p + at, 0),
                   size = decision_log::detail::get<uint32_t>(p + at, 4);
    ASSERT_LE(at + size, bytes.size()) << path;
    ASSERT_TRUE(decision_log::intact(p + at, size)) << path;
    f(kind, p + at);
    at += size;
  }
}

inline std::vector<decision_log::CallRecord> call_records(const std::string& path) {
  std::vector<decision_log::CallRecord> calls;
  for_each_record(path, [&](uint32_t kind, const unsigned char* r) {
    if (kind == decision_log::kKindCall) calls.push_back(decision_log::decode_call(r));
  });
  return calls;
}

}  // namespace ncclbot::plugin::test
