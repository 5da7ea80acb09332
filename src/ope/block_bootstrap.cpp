#include "ncclbot/ope/block_bootstrap.hpp"

#include "ncclbot/stats/bootstrap.hpp"

namespace ncclbot {

uint64_t context_seed(uint64_t seed, size_t x) {
  return seed ^ (uint64_t(x) * 0x9e3779b97f4a7c15ull);
}

std::vector<double> block_bootstrap_sums(std::span<const double> columns, size_t k, uint64_t seed,
                                         int resamples, unsigned threads) {
  const double blocks = double(columns.size() / k);
  std::vector<double> out = bootstrap_column_means(columns, k, seed, 0, uint64_t(resamples), threads);
  for (double& v : out) v *= blocks;
  return out;
}

}  // namespace ncclbot
