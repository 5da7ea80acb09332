#pragma once
// NumPy's default ("linear", Hyndman-Fan type 7) quantile written out for the tests, so that an
// interval the library computes is checked against the definition rather than against the
// library's own quantile: sort, position p (n - 1), interpolate between its two neighbours.
#include <algorithm>
#include <cmath>
#include <vector>

namespace ncclbot::test {

inline double numpy_linear_quantile(std::vector<double> x, double p) {
  std::sort(x.begin(), x.end());
  const double position = p * double(x.size() - 1);
  const size_t below = size_t(std::floor(position));
  const size_t above = std::min(below + 1, x.size() - 1);
  return x[below] + (position - double(below)) * (x[above] - x[below]);
}

}  // namespace ncclbot::test
