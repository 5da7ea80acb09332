// Fabric presets: every shipped preset loads; a bad file is an InputError naming file and line; the
// data folder can be overridden; hosts map onto NCCL nodes by NVLink domain.
#include "ncclbot/sim/fabric.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>

#include "ncclbot/core/error.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::sim {
namespace {

TEST(FabricPreset, AllContractPresetsLoad) {
  for (const char* name : {"h100-ib-a", "h100-ib-b", "h100-roce", "gb200-mnnvl", "gb200-ib"}) {
    const FabricPreset f = load_fabric(name);
    EXPECT_EQ(f.name, name);
    EXPECT_FALSE(f.default_nodes.empty());
    EXPECT_GT(f.nvlink_bw, 0.0f);
  }
  const FabricPreset a = load_fabric("h100-ib-a");
  EXPECT_EQ(a.arch, model::GpuArch::kHopper);
  EXPECT_FLOAT_EQ(a.nvlink_bw, 370.8f);  // topo.h SM90 20.6 GB/s x 18 links
  EXPECT_EQ(a.gpus_per_host, 8);
  EXPECT_EQ(load_fabric("gb200-mnnvl").arch, model::GpuArch::kBlackwell);
  EXPECT_FLOAT_EQ(load_fabric("gb200-mnnvl").nvlink_bw, 721.8f);  // SM100 40.1 x 18
}

TEST(FabricPreset, UnknownNameIsAUsageErrorListingPresets) {
  try {
    load_fabric("h100-nope");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("h100-ib-a"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_fabric("../fabrics/h100-ib-a"), UsageError);
}

class BadPreset : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    dir_ = test::temp_dir();
    const std::string path = dir_ + "/" + name + ".toml";
    test::write_file(path, text);
    return path;
  }
  // A valid preset's text with one line replaced.
  std::string good_with(const std::string& from, const std::string& to) {
    std::ifstream in(data_dir() + "/fabrics/h100-ib-a.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    return s;
  }
  void expect_error(const std::string& text, long line, const std::string& words) {
    const std::string path = write("h100-ib-a", text);
    try {
      load_fabric_file(path);
      FAIL() << "no error for " << words;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  int line_of(const std::string& text, const std::string& needle) {
    const auto at = text.find(needle);
    return 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
  }
  std::string dir_;
};

TEST_F(BadPreset, WrongTypeNamesTheLine) {
  const std::string t = good_with("ring_channels = 16 ", "ring_channels = \"sixteen\" ");
  expect_error(t, line_of(t, "ring_channels ="), "must be an integer");
}

TEST_F(BadPreset, OutOfRangeNamesTheLine) {
  const std::string t = good_with("nvlink_bw = 370.8", "nvlink_bw = -3.0");
  expect_error(t, line_of(t, "nvlink_bw ="), "outside");
}

TEST_F(BadPreset, UnknownKeyNamesTheLine) {
  const std::string t = good_with("ring_channels = 16 ", "ring_chanels = 16 ");
  // The missing key is reported first (at its table), since it is required.
  expect_error(t, line_of(t, "\n[hardware]") + 1, "missing 'ring_channels'");
  const std::string extra = good_with("[sweep]\n", "[sweep]\nflavour = 3\n");
  expect_error(extra, line_of(extra, "flavour"), "unknown key 'flavour'");
}

TEST_F(BadPreset, RangePairMustBeOrdered) {
  const std::string t = good_with("channel_cap_error = [0.0, 0.04]", "channel_cap_error = [0.04, 0.0]");
  expect_error(t, line_of(t, "channel_cap_error"), "lo must not exceed hi");
}

TEST_F(BadPreset, SyntaxErrorNamesTheLine) {
  const std::string t = good_with("[truth]\n", "[truth]\nbroken = = 1\n");
  expect_error(t, line_of(t, "broken"), "");
}

TEST_F(BadPreset, NameMustMatchTheFile) {
  const std::string t = good_with("name = \"h100-ib-a\"", "name = \"other\"");
  expect_error(t, line_of(t, "name = "), "does not match");
}

// [provenance]: every value says where it comes from, with a basis of measured, derived or assumed.
TEST_F(BadPreset, EveryValueNeedsItsProvenance) {
  const auto without_line = [&](const std::string& prefix) {
    std::string s = good_with("", "");
    const auto at = s.find("\n" + prefix);
    EXPECT_NE(at, std::string::npos) << prefix;
    s.erase(at + 1, s.find('\n', at + 1) - at);
    return s;
  };
  const std::string missing = without_line("\"hardware.nvlink_bw\"");
  expect_error(missing, line_of(missing, "nvlink_bw ="), "no [provenance] entry \"hardware.nvlink_bw\"");
  std::string calibrated = good_with("", "");
  const std::string head = "\"truth.nvls_bw_scale\" = { basis = \"";
  const auto entry = calibrated.find(head);
  ASSERT_NE(entry, std::string::npos);
  const auto basis = entry + head.size();  // the basis value
  calibrated.replace(basis, calibrated.find('"', basis) - basis, "calibrated");
  expect_error(calibrated, line_of(calibrated, "\"truth.nvls_bw_scale\""),
               "basis 'calibrated' is none of measured, derived, assumed");
  const std::string extra = good_with(
      "[provenance]\n", "[provenance]\n\"hardware.flux\" = { basis = \"assumed\", source = \"x\" }\n");
  expect_error(extra, line_of(extra, "\"hardware.flux\""), "unknown key 'hardware.flux' in [provenance]");
}

// Each shipped preset: one entry per value of its sourced sections, counted here from the file
// itself, and a source for each.
TEST(FabricPreset, EveryShippedValueHasASourceAndABasis) {
  for (const char* name : {"h100-ib-a", "h100-ib-b", "h100-roce", "gb200-mnnvl", "gb200-ib"}) {
    const FabricPreset f = load_fabric(name);
    const toml::table root = toml::parse_file(f.file);
    size_t values = 0;
    for (const char* section : {"hardware", "sweep", "truth", "deviations", "noise", "observation", "hipipe"})
      if (const toml::table* t = root[section].as_table()) values += t->size();
    EXPECT_EQ(f.provenance.size(), values) << name;
    std::map<std::string, int> bases;
    for (const auto& v : f.provenance) {
      ++bases[v.basis];
      EXPECT_FALSE(v.source.empty()) << name << " " << v.key;
      EXPECT_FALSE(v.value.empty()) << name << " " << v.key;
    }
    EXPECT_GT(bases["measured"], 0) << name;
    EXPECT_GT(bases["assumed"], 0) << name;
  }
  const FabricPreset a = load_fabric("h100-ib-a");
  const auto nvlink = std::find_if(a.provenance.begin(), a.provenance.end(),
                                   [](const auto& v) { return v.key == "hardware.nvlink_bw"; });
  ASSERT_NE(nvlink, a.provenance.end());
  EXPECT_EQ(nvlink->value, "370.8");
}

// docs/simulator.md prints the default preset's table as the reports do: one row per value.
TEST(FabricPreset, TheDocsTableIsTheDefaultPresetsProvenance) {
  const std::string docs = test::read_all(std::string(NCCLBOT_SOURCE_DIR) + "/docs/simulator.md");
  const auto cell = [](std::string s) {
    for (size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2)) s.insert(at, "\\");
    return s;
  };
  const FabricPreset f = load_fabric(kDefaultFabric);
  ASSERT_FALSE(f.provenance.empty());
  for (const auto& v : f.provenance) {
    const std::string row =
        "| `" + v.key + "` | " + cell(v.value) + " | " + v.basis + " | " + cell(v.source) + " |";
    EXPECT_NE(docs.find(row), std::string::npos) << row;
  }
}

TEST(FabricPreset, DataDirOverride) {
  const std::string dir = test::temp_dir();
  std::system(("mkdir -p '" + dir + "/fabrics' && cp '" + data_dir() + "/fabrics/h100-ib-a.toml' '" + dir +
               "/fabrics/'")
                  .c_str());
  setenv("NCCLBOT_DATA_DIR", dir.c_str(), 1);
  EXPECT_EQ(data_dir(), dir);
  EXPECT_EQ(fabric_names(), std::vector<std::string>{"h100-ib-a"});
  EXPECT_THROW(load_fabric("h100-ib-b"), UsageError);
  EXPECT_EQ(load_fabric("h100-ib-a").file, dir + "/fabrics/h100-ib-a.toml");
  unsetenv("NCCLBOT_DATA_DIR");
  EXPECT_EQ(fabric_names().size(), 5u);
}

TEST(FabricTopology, HostsMapOntoNvlinkDomains) {
  const FabricPreset h = load_fabric("h100-ib-a");
  model::Topology t = topology_for(h, 16, 8);
  EXPECT_EQ(t.nodes, 16);
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_EQ(t.nics_per_node, 8);
  t = topology_for(h, 4, 4);  // half a node's GPUs use half its NICs
  EXPECT_EQ(t.nics_per_node, 4);
  EXPECT_THROW(topology_for(h, 4, 16), UsageError);

  const FabricPreset g = load_fabric("gb200-mnnvl");
  t = topology_for(g, 18, 4);  // one NVL72 rack = one NCCL node of 72 ranks
  EXPECT_EQ(t.nodes, 1);
  EXPECT_EQ(t.gpus_per_node, 72);
  t = topology_for(g, 9, 4);
  EXPECT_EQ(t.nodes, 1);
  EXPECT_EQ(t.gpus_per_node, 36);
  t = topology_for(g, 36, 4);
  EXPECT_EQ(t.nodes, 2);
  EXPECT_EQ(t.gpus_per_node, 72);
  EXPECT_EQ(t.nics_per_node, 72);  // 18 trays x 4 NICs
  EXPECT_THROW(topology_for(g, 20, 4), UsageError);

  const FabricPreset i = load_fabric("gb200-ib");
  t = topology_for(i, 8, 4);  // NVL4: every tray its own node
  EXPECT_EQ(t.nodes, 8);
  EXPECT_EQ(t.gpus_per_node, 4);
}

}  // namespace
}  // namespace ncclbot::sim
