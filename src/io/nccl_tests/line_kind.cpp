#include "io/nccl_tests/line_kind.hpp"

#include <cctype>
#include <vector>

#include "io/nccl_tests/printed_number.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::nccl_tests {
namespace {

std::string_view after_hash(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i >= line.size() || line[i] != '#') return {};
  line.remove_prefix(i + 1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_word_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
}

// "Rank 3 Group 0 Pid 123 on host device 3 [...] NAME" -> rank and host.
bool parse_device(std::string_view body, LineInfo& info) {
  const std::vector<std::string_view> t = split_whitespace(body);
  if (t.size() < 8 || t[0] != "Rank" || t[2] != "Group" || t[4] != "Pid" || t[6] != "on") return false;
  const auto rank = parse_int(t[1]);
  if (!rank || *rank < 0 || *rank > 10'000'000) return false;
  info.kind = LineKind::kDevice;
  info.rank = int(*rank);
  info.host = std::string(t[7]);
  return true;
}

}  // namespace

LineInfo classify_line(std::string_view line) {
  LineInfo info;
  const std::string_view body = after_hash(line);
  if (!body.empty()) {
    if (starts_with(body, "nccl-tests version")) {
      info.kind = LineKind::kVersion;
    } else if (starts_with(body, "Collective test starting:")) {
      info.kind = LineKind::kTestStarting;
      info.text = std::string(trim(body.substr(25)));
    } else if (starts_with(body, "Collective test concluded:")) {
      info.kind = LineKind::kTestConcluded;
      info.text = std::string(trim(body.substr(26)));
    } else if (starts_with(body, "nThread ")) {
      info.kind = LineKind::kParams;
    } else if (starts_with(body, "Rank ")) {
      parse_device(body, info);
    } else if (starts_with(body, "Out of bounds values")) {
      const auto t =
          split_whitespace(body.substr(body.find(':') == std::string_view::npos ? 0 : body.find(':') + 1));
      if (!t.empty())
        if (const auto n = parse_printed_number(t[0])) {
          info.kind = LineKind::kOutOfBounds;
          info.value = n->value;
          info.text = t.size() > 1 ? std::string(t[1]) : "";
        }
    } else if (starts_with(body, "Avg bus bandwidth")) {
      const size_t colon = body.find(':');
      const auto t =
          split_whitespace(colon == std::string_view::npos ? std::string_view{} : body.substr(colon + 1));
      if (!t.empty())
        if (const auto v = parse_printed_number(t[0])) {
          info.kind = LineKind::kAvgBusBw;
          info.value = v->value;
          info.text = t.size() > 1 ? std::string(t[1]) : "";
        }
    }
    return info;
  }
  // 2017-2019 trailers had no '#'.
  const std::string_view trimmed = trim(line);
  if (starts_with(trimmed, "Out of bounds values") || starts_with(trimmed, "Avg bus bandwidth"))
    return classify_line("# " + std::string(trimmed));
  if (line.find("Test NCCL failure") != std::string_view::npos ||
      line.find("Test CUDA failure") != std::string_view::npos) {
    info.kind = LineKind::kFailure;
    info.text = std::string(trimmed.substr(0, 300));
  } else if (starts_with(trimmed, "..") && line.find("Test failure") != std::string_view::npos) {
    info.kind = LineKind::kFailureDetail;
  } else if (line.find(" NCCL WARN ") != std::string_view::npos) {
    info.kind = LineKind::kNcclWarn;
    info.text = std::string(trimmed.substr(0, 300));
  }
  return info;
}

std::optional<std::string> forced_env_value(std::string_view line, std::string_view var, bool& from_nccl) {
  const std::string by_env = std::string(var) + " set by environment to ";
  if (const size_t at = line.find(by_env); at != std::string_view::npos) {
    const auto t = split_whitespace(line.substr(at + by_env.size()));
    if (t.empty()) return std::nullopt;
    from_nccl = true;
    return std::string(t[0]);
  }
  const std::string assign = std::string(var) + "=";
  for (size_t at = line.find(assign); at != std::string_view::npos; at = line.find(assign, at + 1)) {
    if (at > 0 && (is_word_char(line[at - 1]) || line[at - 1] == '$')) continue;
    size_t end = at + assign.size();
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) && line[end] != '\'' &&
           line[end] != '"' && line[end] != ';')
      ++end;
    from_nccl = false;
    return std::string(line.substr(at + assign.size(), end - at - assign.size()));
  }
  return std::nullopt;
}

std::optional<std::string> test_name_in_command(std::string_view line) {
  for (size_t at = line.find("_perf"); at != std::string_view::npos; at = line.find("_perf", at + 1)) {
    const size_t end = at + 5;
    if (end < line.size() && is_word_char(line[end])) continue;
    size_t start = at;
    while (start > 0 && is_word_char(line[start - 1])) --start;
    if (start == at) continue;
    if (start > 0 && !(line[start - 1] == '/' || std::isspace(static_cast<unsigned char>(line[start - 1]))))
      continue;
    return std::string(line.substr(start, end - start));
  }
  return std::nullopt;
}

std::optional<int> coll_channels_in(std::string_view line) {
  constexpr std::string_view kInfo = " NCCL INFO ", kTail = " coll channels,";
  const size_t info = line.find(kInfo);
  if (info == std::string_view::npos) return std::nullopt;
  const std::string_view rest = line.substr(info + kInfo.size());
  const size_t digits = rest.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos || digits > 3 ||
      rest.substr(digits, kTail.size()) != kTail)
    return std::nullopt;
  return std::stoi(std::string(rest.substr(0, digits)));
}

}  // namespace ncclbot::nccl_tests
