#include "plugin/decision_table_file.hpp"

#include "plugin/regular_file.hpp"

namespace ncclbot::plugin {

bool load_decision_table(const std::string& path, const std::string& fabric, DecisionTable* table,
                         std::string* error) {
  ReadRules rules;
  rules.max_bytes = kMaxTableFileBytes;
  std::string bytes;
  const ReadResult r = read_regular_file(path, rules, &bytes, error);
  if (r == ReadResult::kMissing) *error = path + ": cannot open (no such file)";
  if (r != ReadResult::kOk) return false;
  return table->parse(bytes, path, fabric, error);
}

}  // namespace ncclbot::plugin
