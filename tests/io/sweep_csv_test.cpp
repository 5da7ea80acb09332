#include "ncclbot/io/sweep_csv.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"

using namespace ncclbot;

namespace {

const char* kCsvHeader = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";

Sweep parse(const std::string& text) {
  std::istringstream in(text);
  return parse_sweep_csv(in, "test.csv");
}

// Expects an InputError whose message starts with "test.csv:<line>:" and contains `reason`.
void expect_error(const std::string& text, long line, const std::string& reason) {
  try {
    parse(text);
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    const std::string where = line > 0 ? "test.csv:" + std::to_string(line) + ": " : "test.csv: ";
    EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

Sweep random_sweep(unsigned seed, bool with_prior) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> time(0.5f, 1.0e6f);
  std::ostringstream csv;
  csv << (with_prior ? kCsvHeader
                     : "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n");
  const int R = 3;
  for (int nodes : {1, 4, 16})
    for (uint64_t bytes : {8ull, 1048576ull, 8589934592ull})
      for (int slot : {0, 2, 5, 13, 20}) {
        const float prior = time(rng);
        for (int r = 0; r < R; ++r) {
          csv << "h100-ib-a,AllReduce," << nodes << ",8," << bytes << ',' << algo_name(slot_algo(slot)) << ','
              << proto_name(slot_proto(slot)) << ',' << r << ',' << format_float(time(rng));
          if (with_prior) csv << ',' << format_float(prior);
          csv << '\n';
        }
      }
  return parse(csv.str());
}

}  // namespace

TEST(SweepCsv, ReadsTensorInCanonicalOrder) {
  // Rows deliberately out of order: contexts and samples are placed by their keys, not arrival.
  const Sweep s = parse(std::string(kCsvHeader) +
                        "h100-ib-a,allreduce,2,8,1024,Ring,Simple,1,12.5,10\n"
                        "h100-ib-a,AllReduce,2,8,1024,ring,simple,0,11.5,10\n"
                        "h100-ib-a,AllReduce,2,8,1024,Tree,LL,0,9,12\n"
                        "h100-ib-a,AllReduce,2,8,1024,Tree,LL,1,10,12\n"
                        "h100-ib-a,AllReduce,1,8,1024,Ring,LL,0,3,3\n"
                        "h100-ib-a,AllReduce,1,8,1024,Ring,LL,1,5,3\n");
  ASSERT_EQ(s.num_contexts(), 2);
  EXPECT_EQ(s.samples(), 2);
  EXPECT_EQ(s.context(0).nodes, 1);  // sorted by nodes
  EXPECT_EQ(s.context(1).nodes, 2);
  const SweepView v = s.view();
  const int ring_simple = arm_slot(Algo::kRing, Proto::kSimple);
  const int tree_ll = arm_slot(Algo::kTree, Proto::kLL);
  EXPECT_EQ(v.sample(1, ring_simple, 0), 11.5f);
  EXPECT_EQ(v.sample(1, ring_simple, 1), 12.5f);
  EXPECT_DOUBLE_EQ(v.mean(1, ring_simple), 12.0);
  EXPECT_DOUBLE_EQ(v.mean(1, tree_ll), 9.5);
  EXPECT_EQ(v.mask(1).count(), 2);
  EXPECT_EQ(v.mask(0).count(), 1);
  EXPECT_TRUE(std::isnan(v.sample(0, ring_simple, 0)));
  ASSERT_TRUE(v.has_prior());
  EXPECT_EQ(v.prior(1, tree_ll), 12.0f);
  EXPECT_EQ(v.prior(1, arm_slot(Algo::kNvls, Proto::kSimple)), -1.0f);
}

TEST(SweepCsv, RoundTripIsBitExact) {
  for (bool with_prior : {true, false})
    for (unsigned seed : {1u, 2u, 3u}) {
      const Sweep a = random_sweep(seed, with_prior);
      std::ostringstream out;
      write_sweep_csv(a, out);
      const Sweep b = parse(out.str());
      EXPECT_TRUE(a.identical_to(b)) << "seed " << seed;
      std::ostringstream again;
      write_sweep_csv(b, again);
      EXPECT_EQ(out.str(), again.str());
    }
}

TEST(SweepCsv, HiPipeRowRoundTripsInSlot23) {
  const std::string csv = std::string(kCsvHeader) +
                          "h100-ib-a,AllReduce,16,8,1073741824,Ring,Simple,0,23000.5,22000\n"
                          "h100-ib-a,AllReduce,16,8,1073741824,HiPIPE,Simple,0,18000.25,17500\n";
  const Sweep a = parse(csv);
  const SweepView v = a.view();
  EXPECT_EQ(v.mask(0).bits, (1u << 5) | (1u << 23));  // Ring/Simple and HiPIPE/Simple
  EXPECT_EQ(v.sample(0, 23, 0), 18000.25f);
  EXPECT_EQ(v.prior(0, 23), 17500.0f);
  std::ostringstream out;
  write_sweep_csv(a, out);
  EXPECT_EQ(out.str(), csv);  // written back with the same name, in slot order
  EXPECT_TRUE(parse(out.str()).identical_to(a));
}

TEST(SweepCsv, HiPipeRunsWithSimpleOnly) {
  const std::string h = kCsvHeader;
  expect_error(h + "f,allreduce,2,8,8,HiPIPE,LL,0,1,1\n", 2,
               "HiPIPE (the simulated arm) runs with proto Simple only, not LL");
  expect_error(h + "f,allreduce,2,8,8,hipipe,LL128,0,1,1\n", 2, "not LL128");
}

TEST(SweepCsv, HeaderColumnsMayComeInAnyOrder) {
  const Sweep s = parse(
      "time_us,sample,proto,algo,bytes,gpus_per_node,nodes,collective,fabric\n"
      "7.25,0,LL,Tree,64,8,1,AllGather,x\n");
  EXPECT_EQ(s.view().sample(0, 0, 0), 7.25f);
  EXPECT_EQ(s.context(0).collective, Collective::kAllGather);
  EXPECT_FALSE(s.has_prior());
}

TEST(SweepCsv, AByteOrderMarkBeforeTheHeaderIsSkipped) {
  // A spreadsheet saves "\xEF\xBB\xBF" (UTF-8's byte order mark) before the first column name.
  const Sweep s = parse(std::string("\xEF\xBB\xBF") + kCsvHeader + "x,allreduce,1,8,64,Tree,LL,0,7.25,5\n");
  EXPECT_EQ(s.view().sample(0, 0, 0), 7.25f);
  expect_error(std::string("\xEF\xBB\xBF") + kCsvHeader + "x,allreduce,1,8,64,Ring,LL64,0,7.25,5\n", 2,
               "unknown proto 'LL64'");
}

TEST(SweepCsv, ValidationErrorsNameLineAndReason) {
  const std::string h = kCsvHeader;
  expect_error(h + "f,allreduce,1,8,8,Butterfly,LL,0,1,1\n", 2, "unknown algo 'Butterfly'");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL64,0,1,1\n", 2, "unknown proto 'LL64'");
  expect_error(h + "f,allscatter,1,8,8,Ring,LL,0,1,1\n", 2, "unknown collective 'allscatter'");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,-3,1\n", 2, "time_us must be positive");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,nan,1\n", 2, "time_us is NaN");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,inf,1\n", 2, "time_us is infinite");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1e300,1\n", 2, "time_us is");  // beyond float range
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,abc,1\n", 2, "time_us is not a number");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1,0\n", 2, "prior_us must be positive");
  expect_error(h + "f,allreduce,0,8,8,Ring,LL,0,1,1\n", 2, "nodes must be a positive integer");
  expect_error(h + "f,allreduce,1,8,-8,Ring,LL,0,1,1\n", 2, "bytes must be a non-negative integer");
  expect_error(h + "f,allreduce,1,8,99999999999999999999999,Ring,LL,0,1,1\n", 2, "bytes must be");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,x,1,1\n", 2, "sample must be an integer");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1\n", 2, "expected 10 fields, found 9");
  expect_error(h + "f g,allreduce,1,8,8,Ring,LL,0,1,1\n", 2, "fabric name 'f g'");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1,1\nf,allreduce,1,8,8,Ring,LL,0,2,1\n", 3,
               "duplicate row for f AllReduce 1x8 8B Ring/LL sample 0");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1,1\nf,allreduce,1,8,8,Ring,LL,1,2,2\n", 3,
               "prior_us differs");
  // Differing sample counts: Ring/LL (line 2) has 2 samples, Tree/LL (line 4, lower slot) only 1.
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1,1\nf,allreduce,1,8,8,Ring,LL,1,2,1\n"
                   "f,allreduce,1,8,8,Tree,LL,0,1,1\n",
               2, "Ring/LL has 2 samples, but the arm at line 4 has 1");
  expect_error(h + "f,allreduce,1,8,8,Ring,LL,0,1,1\nf,allreduce,1,8,8,Ring,LL,2,2,1\n", 2,
               "sample indices must be 0..1");
  expect_error(
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,time_us\nf,allreduce,1,8,8,Ring,LL,1\n", 1,
      "header is missing column 'sample'");
  expect_error("fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,colour\n", 1,
               "unknown column 'colour'");
  expect_error(
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
      "f,allreduce,1,8,8,Ring,LL,0,1,\n",
      2, "prior_us is not a number");
  expect_error("", 0, "empty file");
  expect_error(h, 0, "no data rows");
  expect_error(std::string("fabric,coll\0ective", 18) + "\n", 1, "binary data");
}

TEST(SweepCsv, MissingFileIsInputError) {
  EXPECT_THROW(read_sweep_csv("/nonexistent/sweep.csv"), InputError);
}
