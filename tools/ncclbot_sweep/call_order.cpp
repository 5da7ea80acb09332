#include "call_order.hpp"

#include <numeric>
#include <utility>

#include "ncclbot/core/philox.hpp"

namespace ncclbot::sweep_tool {

std::vector<int> call_order(uint64_t seed, uint32_t context, uint32_t iteration, int n) {
  std::vector<int> order(size_t(n > 0 ? n : 0));
  std::iota(order.begin(), order.end(), 0);
  // Lane k/4 of step `iteration` holds the k-th draw; the context is the stream id.
  Philox4x32 block{};
  for (int k = 0, i = n - 1; i > 0; ++k, --i) {
    if (k % 4 == 0) block = philox_block(seed, context, iteration, uint32_t(k / 4));
    const int j = int(uniform_below(block.v[k % 4], uint32_t(i + 1)));
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  return order;
}

}  // namespace ncclbot::sweep_tool
