// Up to the largest size the model takes (1 TiB per rank) the chunk-size LP is well conditioned on
// every preset: it solves, every schedule is feasible, HiPIPE is never worse than a baseline, and
// no plan holds an empty chunk (an empty chunk moves nothing and only adds latency).
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/comparison.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe {
namespace {

void expect_solved_without_empty_chunks(const std::string& fabric, double bytes) {
  const FabricPreset preset = load_fabric_preset(fabric);
  const Network net = build_network(preset, preset.nodes, preset.gpus_per_node);
  Comparison c;
  ASSERT_NO_THROW(c = compare_schedulers(net, bytes, SchedulerOptions{})) << fabric << " " << bytes;
  const double hipipe = c.result("hipipe").schedule.makespan_us;
  for (const SchedulerResult& r : c.results) {
    EXPECT_LE(hipipe, r.schedule.makespan_us * (1 + 1e-12))
        << fabric << " " << bytes << " " << r.schedule.scheduler;
    for (double chunk : r.schedule.chunk_bytes)
      EXPECT_GE(chunk, 1.0) << fabric << " " << bytes << " " << r.schedule.scheduler;
  }
}

TEST(HipipeLargestSize, EveryPresetAtOneTiB) {
  EXPECT_EQ(kMaxMessageBytes, 1099511627776.0);  // 2^40
  const auto names = fabric_preset_names();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& name : names) expect_solved_without_empty_chunks(name, kMaxMessageBytes);
}

TEST(HipipeLargestSize, SizesBetweenAGiBAndATiB) {
  for (const char* name : {"h100-roce", "gb200-ib"})
    for (const double gib : {16.0, 128.0, 512.0}) expect_solved_without_empty_chunks(name, gib * (1 << 30));
}

TEST(HipipeLargestSize, AboveOneTiBIsRefused) {
  const FabricPreset preset = load_fabric_preset("gb200-mnnvl");
  const Network net = build_network(preset, preset.nodes, preset.gpus_per_node);
  EXPECT_THROW(compare_schedulers(net, kMaxMessageBytes * 2, SchedulerOptions{}), UsageError);
}

}  // namespace
}  // namespace ncclbot::hipipe
