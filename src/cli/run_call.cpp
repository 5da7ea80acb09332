#include "cli/run_call.hpp"

namespace ncclbot::cli {

nlohmann::json run_document(const study::RunSummary& s) {
  nlohmann::json doc = {{"report_md", s.report_md},
                        {"report_html", s.report_html},
                        {"results", s.results_json},
                        {"units", s.units},
                        {"units_reused", s.units_reused}};
  if (!s.variants.empty()) {
    doc["variants"] = nlohmann::json::array();
    for (const auto& v : s.variants)
      doc["variants"].push_back({{"variant", v.name},
                                 {"folder", v.folder},
                                 {"report_html", v.summary.report_html},
                                 {"results", v.summary.results_json},
                                 {"units", v.summary.units},
                                 {"units_reused", v.summary.units_reused}});
  }
  return doc;
}

}  // namespace ncclbot::cli
