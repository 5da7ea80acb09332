// A study on knob sweeps end to end: a [[sweep]] with `knobs` synthesises arms with channels and chunk
// sizes, the learners replay them (over every arm, or kept to NCCL's own knobs with `@slots`),
// results.json names each decision with its knobs, and export-table writes a table from which the
// built tuner plugin, loaded as NCCL loads it, returns the decided algorithm, protocol, channel count
// (getCollInfo) and chunk size (v6 getChunkSize) for every score context.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/names.hpp"
#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

const char* kKnobSpec = "channels=0,8,32;chunk=0,512K";

std::string knob_study_text() {
  return std::string(R"([study]
name = "knob-tiny"
seed = 3
seeds = 2
horizon = 300
curve_horizons = [100]
loss_vs_horizon = []
bootstrap_resamples = 200
permutation_resamples = 999
as_deployed = "ideal"
backend = "cpu"

[[sweep]]
name = "k"
preset = "gb200-ib"
seed = 5
nodes = [2, 4]
collectives = ["allreduce"]
samples = 2
observation = false
knobs = ")") +
         kKnobSpec + R"("

[[scenario]]
name = "ar"
tune = { sweep = "k", nodes = [2] }
score = { sweep = "k", nodes = [4] }

[[policy]]
name = "AUTO"
spec = "auto"

[[policy]]
name = "best-knob"
spec = "oracle"

[[policy]]
name = "best-slot"
spec = "oracle@slots"

[[policy]]
name = "UCB1"
spec = "ucb1:c=0.05,n0=1"

[[policy]]
name = "UCB1-slots"
spec = "ucb1:c=0.05,n0=1@slots"

[[hypothesis]]
a = "UCB1"
b = "AUTO"
metrics = ["mean"]
)";
}

struct KnobStudy {
  std::string dir;
  nlohmann::json results;
  const nlohmann::json& score(const std::string& policy) const {
    for (const auto& s : results["scores"])
      if (s["policy"] == policy) return s;
    throw std::runtime_error("no scores for " + policy);
  }
};

const KnobStudy& knob_study() {
  static const KnobStudy run = [] {
    KnobStudy r;
    r.dir = temp_dir() + "/knob_study";
    write_file(r.dir + ".toml", knob_study_text());
    const CliResult c = run_cli("run '" + r.dir + ".toml' --out '" + r.dir + "' --no-figures");
    EXPECT_EQ(c.exit_code, 0) << c.err;
    r.results = nlohmann::json::parse(read_all(r.dir + "/results.json"));
    return r;
  }();
  return run;
}

}  // namespace

TEST(KnobStudy, DecisionsNameTheirKnobsAndTheSlotPoliciesKeepNcclsOwn) {
  const KnobStudy& s = knob_study();
  EXPECT_EQ(s.results["sweeps"][0]["source"]["knobs"], kKnobSpec);
  EXPECT_GT(s.results["sweeps"][0]["arms_per_context"].get<int>(), 24);
  int knob_decisions = 0;
  for (const auto& score : s.results["scores"])
    for (const auto& d : score["decisions"]) {
      const std::optional<Arm> arm = parse_arm_label(d.get<std::string>());
      ASSERT_TRUE(arm) << d;
      const std::string policy = score["policy"];
      if (policy == "AUTO" || policy == "best-slot" || policy == "UCB1-slots") {
        EXPECT_TRUE(arm->default_knobs()) << policy << " " << d;
      }
      if (policy == "best-knob") knob_decisions += !arm->default_knobs();
    }
  // gb200-ib's knob model makes some knob setting beat NCCL's own in the 4-node allreduce.
  EXPECT_GT(knob_decisions, 0);
}

// The losses are priced against every knob arm (the sweep has no call dynamics, so a call costs its
// arm's mean): the best knob arm in hindsight pays nothing, the
// best algorithm x protocol at NCCL's knobs no more than AUTO (one of its arms) in every context, and
// more than nothing where the best knob arm set a knob.
// A bad knobs key is exit 2 at its line, naming the key once (not the command line's --knobs flag).
TEST(KnobStudy, ABadKnobsKeyNamesTheKeyAndItsLine) {
  std::string text = knob_study_text();
  const std::string good = std::string("knobs = \"") + kKnobSpec + "\"";
  const size_t at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "knobs = \"channels=abc\"");
  const std::string path = ncclbot::test::temp_dir() + "/bad-knobs.toml";
  ncclbot::test::write_file(path, text);
  const CliResult r = run_cli("run '" + path + "' --out '" + path + ".out' --no-figures");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad-knobs.toml:21:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sweep.knobs: channels: 'abc' is not a count"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--knobs"), std::string::npos) << r.err;
}

TEST(KnobStudy, LossesArePricedAgainstTheBestKnobArm) {
  const KnobStudy& s = knob_study();
  const auto& best = s.score("best-knob");
  const auto& best_slot = s.score("best-slot");
  const auto& automatic = s.score("AUTO");
  ASSERT_EQ(best["online"].size(), automatic["online"].size());
  for (size_t i = 0; i < best["online"].size(); ++i) {
    EXPECT_EQ(best["online"][i].get<double>(), 0.0);
    EXPECT_LE(best_slot["online"][i].get<double>(), automatic["online"][i].get<double>());
    const bool knob_wins = !parse_arm_label(best["decisions"][i].get<std::string>())->default_knobs();
    EXPECT_EQ(best_slot["online"][i].get<double>() > 0.0, knob_wins) << best["decisions"][i];
  }
}

// The best knob arms exported in the plugin's table format, read back by the plugin in table mode:
// every score context gets the decided arm, its channel count from getCollInfo and its chunk size
// from getChunkSize (NCCL's own value, here 12345, where the decision keeps NCCL's).
TEST(KnobStudy, ExportedKnobTableRoundTripsThroughThePlugin) {
  const KnobStudy& s = knob_study();
  const std::string table = s.dir + "/best.csv";
  const CliResult c =
      run_cli("export-table --study '" + s.dir + "' --policy best-knob --out '" + table + "'");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(read_all(table).find("algo,proto,channels,chunk_bytes\n"), std::string::npos);
  const CliResult csv = run_cli("export-table --study '" + s.dir +
                                "' --policy best-knob --format nccl-csv --out '" + s.dir + "/best.nccl.csv'");
  const auto& best = s.score("best-knob");
  bool any_chunk = false;
  for (const auto& d : best["decisions"])
    any_chunk |= parse_arm_label(d.get<std::string>())->chunk_bytes != 0;
  EXPECT_EQ(csv.exit_code, any_chunk ? 2 : 0) << csv.err;

  EnvVar mode("NCCLBOT_MODE", "table"), path("NCCLBOT_TABLE", table);
  ASSERT_TRUE(plugin().ok());
  const auto& contexts = s.results["scenarios"][0]["score"]["context_list"];
  for (size_t i = 0; i < contexts.size(); ++i) {
    const auto& ctx = contexts[i];
    const Arm want = *parse_arm_label(best["decisions"][i].get<std::string>());
    const int nodes = ctx["nodes"], ranks = nodes * ctx["gpus_per_node"].get<int>();
    const int coll = int(*parse_collective(ctx["collective"].get<std::string>()));
    const size_t bytes = ctx["bytes"].get<size_t>();
    void* comm = nullptr;
    ASSERT_EQ(plugin().v6->init(&comm, 9, size_t(ranks), size_t(nodes), recording_logger, nullptr, nullptr),
              kNcclSuccess);
    CostTable7x3 costs;
    for (auto& row : costs.t)
      for (float& v : row) v = 1.0f;
    int channels = 0;
    ASSERT_EQ(plugin().v6->getCollInfo(comm, coll, bytes, 1, costs.ptr(), 7, 3, 0, &channels), kNcclSuccess);
    EXPECT_EQ(costs.pick(), want.slot()) << ctx.dump();
    EXPECT_EQ(channels, int(want.channels)) << ctx.dump();
    size_t chunk = 12345;
    ASSERT_EQ(plugin().v6->getChunkSize(comm, coll, bytes, int(want.algo), int(want.proto), 1, &chunk),
              kNcclSuccess);
    EXPECT_EQ(chunk, want.chunk_bytes ? size_t(want.chunk_bytes) : size_t(12345)) << ctx.dump();
    EXPECT_EQ(plugin().v6->finalize(comm), kNcclSuccess);
  }
}

}  // namespace ncclbot::test
