#pragma once
// Selecting contexts of a sweep by node count and collective (the --nodes / --collectives options).
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

struct ContextFilter {
  std::vector<int> nodes;               // empty = all
  std::vector<Collective> collectives;  // empty = all

  bool matches(const Context& c) const;
  // Indices of the matching contexts, in sweep order.
  std::vector<int> select(const Sweep& sweep) const;
  // select(), where selecting nothing is a UsageError naming `sweep_path`, the options and what the
  // sweep has ("--nodes selects no context of S.csv (it has node counts 16, 32; collectives ...)").
  std::vector<int> select_some(const Sweep& sweep, const std::string& sweep_path) const;
};

// Parses "4,8,16" and "allreduce,allgather"; a bad item is a UsageError naming the option.
std::vector<int> parse_node_list(const std::string& text, const std::string& option);
std::vector<Collective> parse_collective_list(const std::string& text, const std::string& option);

}  // namespace ncclbot
