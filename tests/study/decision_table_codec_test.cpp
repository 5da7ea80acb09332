// The decision-table codec (table/decision_table.hpp), the one writer and reader that `export-table`,
// the plugin and `ncclbot ope` use: a table written in either format reads back as the same rows
// (random tables, seeded), and the text of a small table is the one docs/plugin.md "Table format"
// describes, written out here by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ncclbot/core/knob_limits.hpp"
#include "table/decision_table.hpp"

using namespace ncclbot;
using namespace ncclbot::table;

namespace {

// 0 and kAny channels both keep NCCL's count; a table without knob columns reads back kAny.
int own_channels(int c) {
  return c <= 0 ? kAny : c;
}

void expect_same_rows(const std::vector<DecisionRow>& written, const std::vector<DecisionRow>& read,
                      const std::string& text) {
  ASSERT_EQ(written.size(), read.size()) << text;
  for (size_t i = 0; i < written.size(); ++i) {
    const DecisionRow &w = written[i], &r = read[i];
    SCOPED_TRACE("row " + std::to_string(i) + " of\n" + text);
    EXPECT_EQ(r.fabric, w.fabric);
    EXPECT_EQ(r.collective, w.collective);
    EXPECT_EQ(r.nodes, w.nodes);
    EXPECT_EQ(r.gpus_per_node, w.gpus_per_node);
    EXPECT_EQ(r.ranks, w.ranks);
    EXPECT_EQ(r.num_pipe_ops, w.num_pipe_ops);
    EXPECT_EQ(r.reg_buff, w.reg_buff);
    EXPECT_EQ(r.min_bytes, w.min_bytes);
    EXPECT_EQ(r.max_bytes, w.max_bytes);
    EXPECT_EQ(r.algo, w.algo);
    EXPECT_EQ(r.proto, w.proto);
    EXPECT_EQ(own_channels(r.channels), own_channels(w.channels));
    EXPECT_EQ(r.chunk_bytes, w.chunk_bytes);
    EXPECT_EQ(r.line, long(i) + 3);  // after the comment and the header (a comment too in NCCL's CSV)
  }
}

struct RandomRows {
  std::mt19937_64 rng;
  explicit RandomRows(uint64_t seed) : rng(seed) {}
  int below(int n) { return int(rng() % uint64_t(n)); }
  int count() { return below(4) == 0 ? kAny : 1 + below(1000000); }
  void bytes(DecisionRow& r) {
    const uint64_t picks[] = {0, 1, 4096, uint64_t(1) << 40, UINT64_MAX};
    uint64_t a = below(3) == 0 ? picks[below(5)] : rng(), b = below(3) == 0 ? picks[below(5)] : rng();
    if (a > b) std::swap(a, b);
    r.min_bytes = a;
    r.max_bytes = b;
  }
  void arm(DecisionRow& r) {
    if (below(5) == 0) return;  // kAny: keep NCCL's choice
    r.algo = below(7);
    r.proto = below(3);
  }
  // What both formats hold: collective, nodes, sizes, arm, channels.
  DecisionRow common_row() {
    DecisionRow r;
    r.collective = below(4) == 0 ? kAny : below(11);
    r.nodes = count();
    bytes(r);
    arm(r);
    r.channels = below(3) == 0 ? kAny : below(kMaxChannels + 1);
    return r;
  }
  // A row of ncclbot's format: also a fabric, gpus per node and a chunk on the protocol's grain.
  DecisionRow ncclbot_row() {
    DecisionRow r = common_row();
    const char* fabrics[] = {"h100-ib-a", "gb200-mnnvl", "*", ""};
    r.fabric = fabrics[below(4)];
    r.gpus_per_node = count();
    if (r.algo != kAny && below(2) == 0)
      r.chunk_bytes = chunk_grain_bytes(r.proto) * uint64_t(1 + below(4096));
    return r;
  }
  // A row of NCCL's example CSV: also ranks, numPipeOps and regBuff.
  DecisionRow nccl_row() {
    DecisionRow r = common_row();
    r.ranks = count();
    r.num_pipe_ops = below(2) == 0 ? kAny : below(64);
    r.reg_buff = below(2) == 0 ? kAny : below(2);
    return r;
  }
};

// A row of `fabric`'s `nodes` x `gpus_per_node` communicators deciding (algo, proto) at every size.
DecisionRow shaped_row(const std::string& fabric, int collective, int nodes, int gpus_per_node, int algo,
                       int proto) {
  DecisionRow r;
  r.fabric = fabric;
  r.collective = collective;
  r.nodes = nodes;
  r.gpus_per_node = gpus_per_node;
  r.algo = algo;
  r.proto = proto;
  return r;
}

std::vector<DecisionRow> read_back(const std::string& text) {
  DecisionTable t;
  std::string error;
  EXPECT_TRUE(t.parse(text, "written.csv", "", &error)) << error << "\n" << text;
  return t.rows();
}

}  // namespace

TEST(DecisionTableCodec, RandomTablesInNcclbotsFormatReadBackAsWritten) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    RandomRows gen(seed);
    std::vector<DecisionRow> rows(size_t(gen.below(12)));
    for (auto& r : rows) r = gen.ncclbot_row();
    if (seed % 4 == 0)  // some tables with no knob column at all
      for (auto& r : rows) r.channels = 0, r.chunk_bytes = 0;
    const std::string text = format_ncclbot_table(rows, "seed " + std::to_string(seed));
    expect_same_rows(rows, read_back(text), text);
  }
}

TEST(DecisionTableCodec, RandomTablesInNcclsCsvReadBackAsWritten) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    RandomRows gen(seed);
    std::vector<DecisionRow> rows(size_t(gen.below(12)));
    for (auto& r : rows) r = gen.nccl_row();
    const std::string text = format_nccl_csv(rows, "seed " + std::to_string(seed));
    DecisionTable t;
    std::string error;
    ASSERT_TRUE(t.parse(text, "written.csv", "", &error)) << error << "\n" << text;
    if (!rows.empty()) {
      EXPECT_EQ(t.format(), DecisionTable::Format::kNcclExample);
    }
    // Its header is a comment: the rows start on line 3 as after ncclbot's comment and header.
    expect_same_rows(rows, t.rows(), text);
  }
}

TEST(DecisionTableCodec, TheTextIsTheDocumentedFormat) {
  DecisionRow ring = shaped_row("h100-ib-a", 4, 2, 8, 1, 0);  // AllReduce, 2 x 8, Ring/LL
  ring.max_bytes = 65535;
  DecisionRow nvls_tree = ring;
  nvls_tree.min_bytes = 65536;
  nvls_tree.max_bytes = UINT64_MAX;
  nvls_tree.algo = 5;   // NVLSTree
  nvls_tree.proto = 2;  // Simple
  nvls_tree.channels = 0;
  EXPECT_EQ(format_ncclbot_table({ring, nvls_tree}, "two rows"),
            "# two rows\n"
            "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n"
            "h100-ib-a,AllReduce,2,8,0,65535,Ring,LL\n"
            "h100-ib-a,AllReduce,2,8,65536,18446744073709551615,NVLSTree,Simple\n");
  EXPECT_EQ(format_nccl_csv({ring, nvls_tree}, "two rows"),
            "# two rows\n"
            "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"
            "allreduce,0,65535,ring,ll,-1,2,16\n"
            "allreduce,65536,18446744073709551615,nvls_tree,simple,-1,2,16\n");
  // A knob setting adds the two knob columns to every row; a row with NCCL's arm says "auto".
  nvls_tree.channels = 16;
  nvls_tree.chunk_bytes = 1 << 20;
  DecisionRow own = ring;
  own.algo = own.proto = kAny;
  EXPECT_EQ(format_ncclbot_table({own, nvls_tree}, "knobs"),
            "# knobs\n"
            "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n"
            "h100-ib-a,AllReduce,2,8,0,65535,auto,auto,*,0\n"
            "h100-ib-a,AllReduce,2,8,65536,18446744073709551615,NVLSTree,Simple,16,1048576\n");
}

TEST(DecisionTableCodec, NcclsCsvRefusesWhatItCannotHold) {
  DecisionRow a = shaped_row("h100-ib-a", 2, 4, 8, 1, 2);  // AllGather, 4 x 8, Ring/Simple
  DecisionRow b = a;
  b.fabric = "gb200-mnnvl";
  try {
    format_nccl_csv({a, b}, "");
    ADD_FAILURE() << "two fabrics of one shape written";
  } catch (const TableFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "NCCL's CSV format has no fabric column, and fabrics 'h100-ib-a' and 'gb200-mnnvl' both have "
              "AllGather at 4 nodes; choose one with --fabric");
  }
  a.chunk_bytes = 1 << 20;
  EXPECT_THROW(format_nccl_csv({a}, ""), TableFormatError);
}
