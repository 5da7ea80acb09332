#pragma once
// How the report writes numbers: losses as percentages, p-values with three significant digits,
// counts as integers. One place, so the Markdown, the HTML and the findings agree character for
// character.
#include <string>

namespace ncclbot::report {

std::string percent(double fraction);  // 0.0612 -> "6.12%"
std::string p_value(double p);         // 0.00390625 -> "0.00391", 1e-5 -> "1.00e-05"
std::string count(double x);           // 19 -> "19", 2.5 -> "2.5"
// A metric value in its unit: a percentage for losses, a count for above_10pct.
std::string metric_text(const std::string& metric, double v);
// The same for a difference, with an explicit sign: "-3.10 pp", "+2".
std::string metric_diff_text(const std::string& metric, double d);
// A metric's name in words: "mean loss", "p99 loss", "contexts above 10% loss".
std::string metric_words(const std::string& metric);

}  // namespace ncclbot::report
