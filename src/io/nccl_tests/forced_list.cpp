#include "ncclbot/io/nccl_tests/forced_list.hpp"

#include <strings.h>
#include <algorithm>
#include <array>
#include <stdexcept>

namespace ncclbot::nccl_tests {
namespace {

// NCCL's ncclFuncStr, in ncclFunc_t order.
constexpr std::array<std::string_view, 5> kFunctions = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                                        "AllReduce"};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string_view nccl_function_name(Collective c) {
  const int i = int(c);
  return i >= 0 && i < int(kFunctions.size()) ? kFunctions[size_t(i)] : std::string_view();
}

std::string per_function_value(Collective c, std::string_view name) {
  const std::string_view function = nccl_function_name(c);
  if (function.empty()) throw std::invalid_argument("NCCL's NCCL_ALGO and NCCL_PROTO name no such function");
  return std::string(function) + ":" + std::string(name);
}

std::optional<std::string> list_for_collective(std::string_view value, Collective c) {
  std::optional<std::string> out;
  const std::string_view function = nccl_function_name(c);
  // NCCL splits on ';' with strtok, which skips empty entries; the list without a function must be
  // the value's first characters.
  for (size_t at = 0; at <= value.size();) {
    const size_t end = std::min(value.find(';', at), value.size());
    const std::string_view entry = value.substr(at, end - at);
    const bool first = at == 0;
    at = end + 1;
    if (entry.empty()) continue;
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      if (!first)
        throw std::invalid_argument("every entry after the first must name a function (FUNCTION:LIST)");
      out = std::string(entry);
      continue;
    }
    const std::string_view prefix = entry.substr(0, colon), list = entry.substr(colon + 1);
    bool known = false;
    for (std::string_view f : kFunctions) known = known || same_name(prefix, f);
    if (!known)
      throw std::invalid_argument("'" + std::string(prefix) +
                                  "' is no function NCCL tunes (Broadcast, Reduce, AllGather, ReduceScatter, "
                                  "AllReduce)");
    if (list.empty() || list.find(':') != std::string_view::npos)
      throw std::invalid_argument("'" + std::string(entry) + "' gives no list of names");
    if (function.empty())
      throw std::invalid_argument("it names NCCL functions, and this collective is none of them");
    if (same_name(prefix, function)) out = std::string(list);
  }
  if (!out && value.find_first_not_of(';') == std::string_view::npos)
    throw std::invalid_argument("an empty value");
  return out;
}

}  // namespace ncclbot::nccl_tests
