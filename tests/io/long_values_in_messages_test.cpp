// A value quoted in an error message is cut to its first 60 characters and its length, so a 200 KB
// key, a 300-digit number or a 300-digit bound stays one short line; short values are shown whole.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "support/run_cli.hpp"

namespace ncclbot {
namespace {

template <typename F>
std::string input_error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LongValuesInMessages, QuotedValueKeepsShortValuesAndCutsLongOnes) {
  EXPECT_EQ(quoted_value("nic_bw"), "'nic_bw'");
  EXPECT_EQ(quoted_value(std::string(80, 'k')), "'" + std::string(80, 'k') + "'");
  EXPECT_EQ(quoted_value(std::string(204800, 'k')), "'" + std::string(60, 'k') + "\u2026' (204800 bytes)");
  // Never inside a UTF-8 character: byte 60 is the second byte of the 30th 'é', so 59 bytes stay.
  std::string accents = "a";
  for (int i = 0; i < 100; ++i) accents += "\u00e9";
  std::string expected = "'a";
  for (int i = 0; i < 29; ++i) expected += "\u00e9";
  EXPECT_EQ(quoted_value(accents), expected + "\u2026' (201 bytes)");
}

TEST(LongValuesInMessages, TomlKeyOfTwoHundredKilobytes) {
  const std::string key(200 * 1024, 'x');
  const TomlReader r("big.toml");
  const toml::table t = r.parse("[campaign]\n" + key + " = 1\n");
  const std::string message =
      input_error_of([&] { r.only_keys(*t["campaign"].as_table(), "[campaign]", {"a"}); });
  EXPECT_LT(message.size(), 200u) << message.substr(0, 300);
  EXPECT_NE(message.find("big.toml:2: unknown key 'xxxxxxxxxx"), std::string::npos) << message.substr(0, 300);
  EXPECT_NE(message.find("(204800 bytes)"), std::string::npos) << message.substr(0, 300);
  const std::string manifest = input_error_of(
      [&] { nccl_tests::parse_manifest("[[run]]\nfile = \"a.log\"\n" + key + " = 1\n", "m.toml"); });
  EXPECT_LT(manifest.size(), 300u) << manifest.substr(0, 300);
  EXPECT_NE(manifest.find("m.toml:3: unknown key"), std::string::npos) << manifest.substr(0, 300);
}

TEST(LongValuesInMessages, ThreeHundredDigitNumbersAndBounds) {
  // A preset value of 1e300 against [0.1, 10000]: the number in its shortest form, not 301 digits.
  std::string preset = test::read_all(std::string(NCCLBOT_SOURCE_DIR) + "/data/fabrics/h100-ib-a.toml");
  const size_t at = preset.find("nic_bw = 48.0");
  ASSERT_NE(at, std::string::npos);
  preset.replace(at, 13, "nic_bw = 1e300");
  const std::string message = input_error_of([&] { sim::parse_fabric(preset, "h100-ib-a.toml"); });
  EXPECT_NE(message.find("'nic_bw' = 1e+300 is outside [0.1, 10000]"), std::string::npos) << message;
  // The bound of TomlReader's own range check, in shortest form too.
  const TomlReader r("n.toml");
  const toml::table t = r.parse("x = 5.0\n");
  EXPECT_EQ(input_error_of([&] { r.number(*t.get("x"), "x", 0.0, 1e300); }), "(no error)");
  EXPECT_EQ(input_error_of([&] { r.number(*t.get("x"), "x", 6.0, 1e300); }),
            "n.toml:1: x must be in [6, 1e+300]");
  // A 300-digit byte count in a sweep.
  const std::string digits(300, '9');
  std::istringstream csv(
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\nf,allreduce,1,8," + digits +
      ",Ring,LL,0,10\n");
  const std::string sweep = input_error_of([&] { parse_sweep_csv(csv, "s.csv"); });
  EXPECT_LT(sweep.size(), 200u) << sweep;
  EXPECT_NE(sweep.find("(300 bytes)"), std::string::npos) << sweep;
}

TEST(LongValuesInMessages, ThreeHundredDigitOptionValue) {
  const auto r =
      test::run_cli("synth --fabric h100-ib-a --seed " + std::string(300, '9') + " --out /tmp/never.csv");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(r.err.size(), 250u) << r.err;
  EXPECT_NE(r.err.find("(300 bytes)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ncclbot
