#pragma once
// Exact McNemar test for paired binary outcomes, e.g. "contexts above 10% loss": b = contexts where
// only policy A is above, c = contexts where only policy B is. Under H0 each discordant context is
// a fair coin, so the test is the two-sided sign test min(1, 2 P(Bin(b+c, 1/2) <= min(b, c))), as
// statsmodels `mcnemar(table, exact=True)` computes it.
#include <cstdint>

namespace ncclbot {

struct McNemarResult {
  int64_t statistic = 0;  // min(b, c)
  double p_value = 1.0;
};

McNemarResult mcnemar_exact(int64_t b, int64_t c);  // std::invalid_argument for negative counts

}  // namespace ncclbot
