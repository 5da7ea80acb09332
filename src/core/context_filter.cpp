#include "ncclbot/core/context_filter.hpp"

#include <algorithm>
#include <sstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) items.push_back(item);
  return items;
}

}  // namespace

bool ContextFilter::matches(const Context& c) const {
  if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), c.nodes) == nodes.end()) return false;
  if (!collectives.empty() &&
      std::find(collectives.begin(), collectives.end(), c.collective) == collectives.end())
    return false;
  return true;
}

std::vector<int> ContextFilter::select(const Sweep& sweep) const {
  std::vector<int> out;
  for (int c = 0; c < sweep.num_contexts(); ++c)
    if (matches(sweep.context(c))) out.push_back(c);
  return out;
}

std::vector<int> ContextFilter::select_some(const Sweep& sweep, const std::string& sweep_path) const {
  std::vector<int> out = select(sweep);
  if (!out.empty()) return out;
  std::vector<int> have_nodes;
  std::vector<Collective> have_collectives;
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const Context& x = sweep.context(c);
    if (std::find(have_nodes.begin(), have_nodes.end(), x.nodes) == have_nodes.end())
      have_nodes.push_back(x.nodes);
    if (std::find(have_collectives.begin(), have_collectives.end(), x.collective) == have_collectives.end())
      have_collectives.push_back(x.collective);
  }
  std::sort(have_nodes.begin(), have_nodes.end());
  std::string asked, has = "node counts";
  if (!nodes.empty()) asked += "--nodes";
  if (!collectives.empty()) asked += std::string(asked.empty() ? "" : " and ") + "--collectives";
  for (size_t i = 0; i < have_nodes.size(); ++i) has += (i ? ", " : " ") + std::to_string(have_nodes[i]);
  has += "; collectives";
  for (size_t i = 0; i < have_collectives.size(); ++i)
    has += (i ? ", " : " ") + std::string(collective_name(have_collectives[i]));
  if (have_nodes.empty()) has = "no context at all";
  const bool both = !nodes.empty() && !collectives.empty();
  throw UsageError((asked.empty() ? std::string("the filter") : asked) + (both ? " select" : " selects") +
                   " no context of " + sweep_path + " (it has " + has + ")");
}

std::vector<int> parse_node_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    const auto v = parse_int(item);
    if (!v || *v <= 0 || *v > (1 << 20))
      throw UsageError(option + ": '" + item + "' is not a positive node count");
    out.push_back(int(*v));
  }
  if (out.empty()) throw UsageError(option + ": empty list");
  return out;
}

std::vector<Collective> parse_collective_list(const std::string& text, const std::string& option) {
  std::vector<Collective> out;
  for (const auto& item : split_list(text)) {
    const auto c = parse_collective(item);
    if (!c)
      throw UsageError(option + ": unknown collective '" + item +
                       "' (valid: " + std::string(collective_names_list()) + ")");
    out.push_back(*c);
  }
  if (out.empty()) throw UsageError(option + ": empty list");
  return out;
}

}  // namespace ncclbot
