#pragma once
// A context is one cell of a forced-arm sweep: where (fabric, scale) and what (collective, size).
#include <cstdint>
#include <string>

#include "ncclbot/core/collective.hpp"

namespace ncclbot {

struct Context {
  std::string fabric;
  Collective collective = Collective::kAllReduce;
  int nodes = 1;
  int gpus_per_node = 1;
  uint64_t bytes = 0;  // nccl-tests `size` column

  int ranks() const { return nodes * gpus_per_node; }
  bool operator==(const Context&) const = default;
  auto operator<=>(const Context&) const = default;
};

}  // namespace ncclbot
