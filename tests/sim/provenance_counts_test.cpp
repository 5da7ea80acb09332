// docs/simulator.md states how many values of each preset are measured, derived and assumed; the
// counts here come from the presets' [provenance] tables, so a relabelled value that the doc does
// not follow fails, and the message prints the line the doc should hold.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::sim {
namespace {

// docs/simulator.md with its line breaks as spaces: a count may wrap.
std::string simulator_doc() {
  std::string docs = test::read_all(std::string(NCCLBOT_SOURCE_DIR) + "/docs/simulator.md");
  for (char& c : docs)
    if (c == '\n') c = ' ';
  return docs;
}

// "`h100-ib-a` 7 / 20 / 36": measured / derived / assumed, as docs/simulator.md writes a preset's counts.
std::string counts_text(const FabricPreset& f, const std::string& name) {
  std::map<std::string, int> n;
  for (const auto& v : f.provenance) ++n[v.basis];
  return "`" + name + "` " + std::to_string(n["measured"]) + " / " + std::to_string(n["derived"]) + " / " +
         std::to_string(n["assumed"]);
}

TEST(ProvenanceCounts, TheDocsStateEveryPresetsCounts) {
  const std::string docs = simulator_doc();
  const auto names = fabric_names();
  ASSERT_GE(names.size(), 5u);
  for (const auto& name : names) {
    const std::string want = counts_text(load_fabric(name), name);
    EXPECT_NE(docs.find(want), std::string::npos) << "docs/simulator.md should state " << want;
  }
}

// The default preset's counts also open its table, in words.
TEST(ProvenanceCounts, TheDefaultPresetsSentenceHasItsCounts) {
  const std::string docs = simulator_doc();
  std::map<std::string, int> n;
  for (const auto& v : load_fabric(kDefaultFabric).provenance) ++n[v.basis];
  const std::string want = "`" + std::string(kDefaultFabric) + "` (" + std::to_string(n["measured"]) +
                           " measured, " + std::to_string(n["derived"]) + " derived, " +
                           std::to_string(n["assumed"]) + " assumed";
  EXPECT_NE(docs.find(want), std::string::npos) << "docs/simulator.md should state " << want;
}

}  // namespace
}  // namespace ncclbot::sim
