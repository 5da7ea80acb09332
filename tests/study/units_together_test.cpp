// compute_units_together() (study/unit_work.hpp), the device backend's path for `run` and
// `run-units`: every unit of a scenario shares one replay job per phase, and each unit's result
// must be the bytes it gets computed alone (compute_unit), whatever the order and grouping of
// the units handed over. Run on the CPU engine here (both engines give the same bits per config:
// tests/gpu/cuda_engine_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/prepared_study.hpp"
#include "study/study_spec.hpp"
#include "study/unit_work.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::study;

namespace {

// tests/data/study/tiny.toml at shorter horizons, with a supervised selector (frozen decisions per
// config) among the policies.
PreparedStudy small_study() {
  std::string text = ncclbot::test::read_all(std::string(NCCLBOT_TEST_DATA_DIR) + "/study/tiny.toml");
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("horizon = 8000", "horizon = 600");
  replace("curve_horizons = [100, 2000]", "curve_horizons = [50, 200, 600]");
  text += "\n[[policy]]\nname = \"kNN\"\nspec = \"knn:k=1|3\"\n";
  return prepare_study(parse_study(text, "tiny-together"));
}

}  // namespace

TEST(UnitsTogether, EachUnitGetsTheBytesItGetsAlone) {
  const PreparedStudy study = small_study();
  ASSERT_EQ(study.units.size(), 10u);  // 2 scenarios x 5 policies
  EngineOptions engine;
  engine.threads = 2;
  // Reversed, so the scenarios' units arrive interleaved with the other scenario's order.
  std::vector<const WorkUnit*> units;
  for (const auto& u : study.units) units.push_back(&u);
  std::reverse(units.begin(), units.end());
  std::vector<std::string> together(units.size());
  int calls = 0;
  compute_units_together(study, units, engine, [&](size_t k, UnitResult&& r) {
    ++calls;
    together.at(k) = to_json(r).dump();
  });
  EXPECT_EQ(calls, int(units.size()));
  for (size_t k = 0; k < units.size(); ++k) {
    const UnitResult alone = compute_unit(study, *units[k], engine);
    EXPECT_EQ(together[k], to_json(alone).dump()) << units[k]->file_name;
    EXPECT_EQ(alone.curve.size(), 3u);
    EXPECT_FALSE(alone.final_slot.empty());
  }
}
