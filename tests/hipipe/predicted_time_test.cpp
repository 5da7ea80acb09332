// HiPIPE as a simulated arm: predicted time per context, against closed forms.
#include <gtest/gtest.h>

#include "ncclbot/hipipe/closed_form.hpp"
#include "ncclbot/hipipe/predicted_time.hpp"

namespace ncclbot::hipipe {
namespace {

TEST(HipipePredictedTime, OneNodeIsTheNvlinkRing) {
  // h100-ib-a, 1 node x 8 GPUs: NVLink only, 3.4 us, 370 GB/s (data/hipipe/h100-ib-a.toml).
  const double t = hipipe_predicted_time_us("h100-ib-a", Collective::kAllReduce, 1, 8, 1u << 30);
  EXPECT_NEAR(t, ring_allreduce_us(8, 3.4, 370.0, 1073741824.0), 1e-6);
}

TEST(HipipePredictedTime, MultiNodeBeatsTheUnpipelinedHierarchy) {
  // 16 nodes, 1 GiB: at most the sequential hierarchical time (10900.5393 us, closed_form_test),
  // and at least the IB dimension's own work: 2 * 2887.2153 us.
  const double t = hipipe_predicted_time_us("h100-ib-a", Collective::kAllReduce, 16, 8, 1u << 30);
  EXPECT_LE(t, 10900.5393);
  EXPECT_GE(t, 2 * 2887.2153);
  // Deterministic: the same context gives the same bits.
  EXPECT_EQ(t, hipipe_predicted_time_us("h100-ib-a", Collective::kAllReduce, 16, 8, 1u << 30));
}

TEST(HipipePredictedTime, LoadedPresetOverloadAgrees) {
  const FabricPreset p = load_fabric_preset("gb200-mnnvl");
  EXPECT_EQ(hipipe_predicted_time_us(p, Collective::kAllReduce, 36, 4, 1u << 28),
            hipipe_predicted_time_us("gb200-mnnvl", Collective::kAllReduce, 36, 4, 1u << 28));
}

}  // namespace
}  // namespace ncclbot::hipipe
