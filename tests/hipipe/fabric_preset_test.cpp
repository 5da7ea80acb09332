// The HiPIPE fabric presets in data/hipipe: every file parses, names match the simulator's preset
// names, and job shapes map onto dimensions as documented.
#include <gtest/gtest.h>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::hipipe {
namespace {

std::vector<int> sizes(const Network& n) {
  std::vector<int> out;
  for (const auto& d : n.dimensions) out.push_back(d.group_size);
  return out;
}

TEST(HipipeFabricPreset, AllShippedPresetsLoad) {
  const auto names = fabric_preset_names();
  for (const char* expected :
       {"h100-ib-a", "h100-ib-b", "h100-roce", "gb200-mnnvl", "gb200-ib", "h100-ib-3d"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const auto& name : names) {
    const FabricPreset p = load_fabric_preset(name);
    EXPECT_EQ(p.name, name);
    for (const auto& d : p.dimensions) EXPECT_FALSE(d.source.empty()) << name << " " << d.name;
    EXPECT_NO_THROW(build_network(p, p.nodes, p.gpus_per_node)) << name;
  }
}

TEST(HipipeFabricPreset, H100NodesTimesIb) {
  const FabricPreset p = load_fabric_preset("h100-ib-a");
  const Network n = build_network(p, 16, 8);
  EXPECT_EQ(sizes(n), (std::vector<int>{8, 16}));
  EXPECT_DOUBLE_EQ(n.dimensions[0].bandwidth_GBps, 370.0);
  EXPECT_DOUBLE_EQ(n.dimensions[1].bandwidth_GBps, 47.0);
  EXPECT_EQ(sizes(build_network(p, 1, 8)), (std::vector<int>{8}));  // one node: NVLink only
  EXPECT_EQ(sizes(build_network(p, 4, 1)), (std::vector<int>{4}));  // one GPU per node: IB only
}

TEST(HipipeFabricPreset, Gb200NvlinkDomainSpansUpTo18Trays) {
  const FabricPreset p = load_fabric_preset("gb200-mnnvl");
  EXPECT_EQ(sizes(build_network(p, 18, 4)), (std::vector<int>{72}));
  EXPECT_EQ(sizes(build_network(p, 36, 4)), (std::vector<int>{72, 2}));
  EXPECT_EQ(sizes(build_network(p, 32, 4)), (std::vector<int>{64, 2}));  // 16 trays per rack divide 32
  EXPECT_EQ(sizes(build_network(p, 4, 4)), (std::vector<int>{16}));
}

TEST(HipipeFabricPreset, ThreeDimensionExample) {
  const FabricPreset p = load_fabric_preset("h100-ib-3d");
  EXPECT_EQ(sizes(build_network(p, 32, 8)), (std::vector<int>{8, 4, 8}));
  EXPECT_EQ(sizes(build_network(p, 2, 8)), (std::vector<int>{8, 2}));     // leaf only
  EXPECT_EQ(sizes(build_network(p, 6, 8)), (std::vector<int>{8, 3, 2}));  // largest leaf dividing 6
}

TEST(HipipeFabricPreset, BadShapesAndNames) {
  const FabricPreset p = load_fabric_preset("h100-ib-a");
  EXPECT_THROW(build_network(p, 1, 1), UsageError);  // one rank
  EXPECT_THROW(build_network(p, 0, 8), UsageError);
  EXPECT_THROW(build_network(p, 4, -1), UsageError);
  EXPECT_THROW(load_fabric_preset("no-such-fabric"), UsageError);
  // gb200-ib has no multi-node NVLink: 4 trays give NVLink 4 x IB 4.
  const FabricPreset q = load_fabric_preset("gb200-ib");
  EXPECT_EQ(sizes(build_network(q, 4, 4)), (std::vector<int>{4, 4}));
}

TEST(HipipeFabricPreset, MalformedFilesNameFileAndLine) {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/bad.toml";
  test::write_file(
      path,
      "name = \"bad\"\nnodes = 2\ngpus_per_node = 8\n"
      "[[dimension]]\nname = \"nv\"\nspans = \"gpus\"\nlatency_us = 1\nbandwidth_GBps = 0\nsource = \"x\"\n");
  try {
    read_fabric_preset(path);
    FAIL() << "zero bandwidth accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 8);  // the bandwidth_GBps line
    EXPECT_NE(std::string(e.what()).find("bandwidth_GBps"), std::string::npos);
  }
  test::write_file(
      path,
      "name = \"bad\"\nnodes = 2\ngpus_per_node = 8\n[[dimension]]\nname = \"nv\"\nspans = \"racks\"\n");
  EXPECT_THROW(read_fabric_preset(path), InputError);
  test::write_file(path, "name = \"bad\"\nnodes = = 2\n");
  try {
    read_fabric_preset(path);
    FAIL() << "syntax error accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
  }
  test::write_file(path,
                   "name = \"bad\"\nnodes = 2\ngpus_per_node = 8\n"
                   "[[dimension]]\nname = \"nv\"\nspans = \"gpus\"\nlatency_us = -1\nbandwidth_GBps = "
                   "10\nsource = \"x\"\n");
  EXPECT_THROW(read_fabric_preset(path), InputError);
}

}  // namespace
}  // namespace ncclbot::hipipe
