#include "ncclbot/core/nccl_version.hpp"

#include <cctype>
#include <charconv>

#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string exact_minor_version(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || !all_digits(text.substr(0, dot)) || !all_digits(text.substr(dot + 1)))
    return "";
  return std::string(text);
}

std::string nccl_minor_version(std::string_view text, std::string_view option) {
  std::string_view v = text;
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  v = v.substr(0, v.find('-'));  // a package's release suffix: 2.32.3-1
  const size_t second_dot = v.find('.', v.find('.') + 1);
  std::string minor = exact_minor_version(v.substr(0, second_dot));
  if (second_dot != std::string_view::npos) {  // MAJOR.MINOR.PATCH: the patch must be digits too
    const std::string_view patch = v.substr(second_dot + 1);
    if (!all_digits(patch)) minor.clear();
  }
  if (minor.empty())
    throw UsageError(std::string(option) + ": '" + std::string(text) +
                     "' is no NCCL version (MAJOR.MINOR or MAJOR.MINOR.PATCH, like 2.32 or 2.32.3)");
  return minor;
}

bool nccl_version_at_least(std::string_view version, int major, int minor) {
  const size_t dot = version.find('.');
  int have_major = -1, have_minor = -1;
  if (dot == std::string_view::npos) return false;
  const auto a = std::from_chars(version.data(), version.data() + dot, have_major);
  const auto b = std::from_chars(version.data() + dot + 1, version.data() + version.size(), have_minor);
  if (a.ec != std::errc() || b.ec != std::errc()) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

}  // namespace ncclbot
