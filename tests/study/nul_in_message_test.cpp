// A user's value quoted in an error message may hold a NUL (TOML's \u0000): the message keeps its
// reason after it, the NUL shown as \x00, instead of ending there.
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/error.hpp"

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

TEST(NulInMessage, APolicyNameWithANulKeepsItsReason) {
  const std::string dir = temp_dir(), study = dir + "/nul.toml";
  write_file(study, small_study_text("nul", "[[policy]]\nname = \"U\\u0000x\"\nspec = \"auto\"\n"));
  const CliResult r = run_cli("run '" + study + "' --out '" + dir + "/run' --no-figures");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("policy name 'U\\x00x' must be 1-64 of"), std::string::npos) << r.err;
}

TEST(NulInMessage, AUsageErrorKeepsItsReason) {
  const UsageError e(std::string("option 'a\0b' is bad", 19));
  EXPECT_STREQ(e.what(), "option 'a\\x00b' is bad");
}

}  // namespace
}  // namespace ncclbot::test
