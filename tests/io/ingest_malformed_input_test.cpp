// Input a person must fix is never passed over silently: a data row whose size is not a plain byte
// count, a run that starts again in the middle of a results table, a device or an endless line in
// place of a log. Each is an InputError naming the file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "support/nccl_tests_rows.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;
using namespace ncclbot::test;

namespace {

const std::string kHeader = "# Collective test starting: all_reduce_perf\n" + kHeader13;
const std::string kTrailer = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 62.9125\n";

std::string error_of(const std::string& text) {
  try {
    parse_log(text, "m.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IngestMalformedInput, EveryMalformedSizeFailsOnItsLine) {
  // The row between two good ones (line 4) with its size spelt as people mistype it.
  for (const std::string size : {"-64", "64.5", "1e3", "64B", "abc", "+64", ".5"}) {
    std::string row = kRow2M;
    row.replace(row.find("2097152"), 7, size);
    const std::string err = error_of(kHeader + kRow1M + row + kTrailer);
    EXPECT_EQ(err.rfind("m.txt:4: ", 0), 0u) << size << " -> " << err;
  }
  // A well-formed table still parses (the test above is not rejecting everything).
  EXPECT_EQ(parse_log(kHeader + kRow1M + kRow2M + kTrailer, "m.txt").runs[0].rows.size(), 2u);
}

TEST(IngestMalformedInput, NoiseInsideATableStaysNoise) {
  const std::string info = "host:123:456 [0] NCCL INFO Channel 00/16 : 0 1 2 3 4 5 6 7 8 9 10 11 12\n";
  const std::string comment = "# 64 64 64\n";
  const ParsedLog log = parse_log(kHeader + kRow1M + info + comment + kRow2M + kTrailer, "m.txt");
  EXPECT_EQ(log.runs[0].rows.size(), 2u);
}

TEST(IngestMalformedInput, ARunStartingInTheMiddleOfATableIsAnError) {
  // Two rows of the first run, then another run's start line: not "run 1 with 2 rows".
  for (const std::string restart : {"# Collective test starting: all_reduce_perf\n",
                                    "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n",
                                    "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0] GPU\n"}) {
    const std::string err = error_of(kHeader + kRow1M + restart + kRow2M + kTrailer);
    EXPECT_EQ(err.rfind("m.txt:4: ", 0), 0u) << err;
    EXPECT_NE(err.find("in the middle of the results table of the run at line 1"), std::string::npos) << err;
  }
}

TEST(IngestMalformedInput, DevicesAndEndlessLinesAreRefused) {
  try {
    read_log("/dev/zero");
    ADD_FAILURE() << "/dev/zero was read";
  } catch (const InputError& e) {
    // A device is refused before anything is read (it would never end).
    EXPECT_NE(std::string(e.what()).find("/dev/zero: is not a regular file"), std::string::npos) << e.what();
  }
  const std::string long_line(size_t(2) << 20, 'x');
  EXPECT_NE(error_of(kHeader + long_line + "\n").find("m.txt:3: line longer than 1024 KiB"),
            std::string::npos);
}

TEST(IngestMalformedInput, ALogBeyondTheSizeCapIsRefused) {
  // A sparse file one byte over the cap: refused by its size, before anything is read.
  const std::string path = testing::TempDir() + "/huge_log.txt";
  std::ofstream(path, std::ios::binary).close();
  ASSERT_EQ(::truncate(path.c_str(), off_t(kMaxLogBytes + 1)), 0);
  try {
    read_log(path);
    ADD_FAILURE() << "a log beyond the cap was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 256 MiB"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}
