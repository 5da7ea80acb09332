// The Python module runs commands in process from a list of std::strings, which, unlike argv, can
// hold a NUL byte: 'keep\0.csv' must be refused, not cut to 'keep' (which would replace that file).
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/dispatch.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

struct InProcessRun {
  int exit_code = -1;
  std::string err;
};

InProcessRun run_in_process(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::streambuf* const old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const old_err = std::cerr.rdbuf(err.rdbuf());
  const int code = cli::run_cli(args);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, err.str()};
}

TEST(NulByteArgument, AnOutputPathWithANulByteIsRefusedAndTheFileBeforeItKept) {
  const std::string dir = temp_dir();
  write_file(dir + "/keep", "the user's own file");
  using namespace std::string_literals;
  const std::string path = dir + "/keep\0.csv"s;
  const InProcessRun r = run_in_process({"synth", "--fabric", "h100-ib-a", "--nodes", "2", "--out", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find("argument 7 (after '--out')"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NUL"), std::string::npos) << r.err;
  EXPECT_TRUE(read_all(dir + "/keep") == "the user's own file");  // not replaced by a sweep
}

TEST(NulByteArgument, TheOptionIsNamedInEveryForm) {
  using namespace std::string_literals;
  const InProcessRun joined = run_in_process({"synth", "--fabric", "h100-ib-a", "--out=/tmp/x\0y"s});
  EXPECT_EQ(joined.exit_code, 2);
  EXPECT_EQ(joined.err.rfind("ncclbot: --out '", 0), 0u) << joined.err;
  const InProcessRun positional = run_in_process({"inspect", "a\0b.csv"s});
  EXPECT_EQ(positional.exit_code, 2);
  EXPECT_NE(positional.err.find("argument 2"), std::string::npos) << positional.err;
}

}  // namespace
}  // namespace ncclbot::test
