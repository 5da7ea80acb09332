// Study text (its name, description, claims) is the user's and reaches report.md and report.html
// as text: control characters, ANSI escape sequences among them, are dropped on the way.
#include <gtest/gtest.h>

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

// The first control character in `s` (C0 but newline and tab, DEL, C1 in UTF-8), or -1.
long first_control(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9f;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c1) return long(i);
  }
  return -1;
}

// The UTF-8 of the format characters that reorder or break what a reader sees (Unicode's bidi
// controls U+061C, U+200E-F, U+202A-E, U+2066-9, and the separators U+2028-9), written by hand.
const char* const kInvisibleFormats[] = {"\xD8\x9C",     "\xE2\x80\x8E", "\xE2\x80\x8F", "\xE2\x80\xAA",
                                         "\xE2\x80\xAB", "\xE2\x80\xAC", "\xE2\x80\xAD", "\xE2\x80\xAE",
                                         "\xE2\x81\xA6", "\xE2\x81\xA7", "\xE2\x81\xA8", "\xE2\x81\xA9",
                                         "\xE2\x80\xA8", "\xE2\x80\xA9"};

TEST(ReportText, ControlCharactersOfTheStudyNeverReachTheReport) {
  const std::string dir = temp_dir(), study = dir + "/s.toml", out = dir + "/run";
  const std::string text = R"(red \u001b[31malert\u001b[0m bell\u0007 del\u007f c1\u0085 cr\r end)"
                           R"( rlo\u202Egnp.exe lri\u2066x\u2069 ls\u2028ps\u2029alm\u061Cend)";
  std::string toml = small_study_text("ctl\\u001b[2J",
                                      "[[policy]]\nname = \"AUTO\"\nspec = \"auto\"\n"
                                      "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n");
  toml.insert(toml.find('\n') + 1, "description = \"" + text + "\"\n");
  toml += "[[claim]]\nclaim = \"" + text + "\"\npaper = \"" + text +
          "\"\nkind = \"pooled\"\nmetric = \"mean\"\na = \"AUTO\"\nb = \"g\"\nagrees_if = \"b_not_higher\"\n"
          "margin = 0.01\nmargin_reason = \"" +
          text + "\"\nbasis = \"tested\"\nwhy_agree = \"" + text + "\"\nwhy_disagree = \"" + text + "\"\n";
  write_file(study, toml);
  const CliResult r = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = read_all(out + "/report.md"), html = read_all(out + "/report.html");
  EXPECT_EQ(first_control(md), -1) << md;
  EXPECT_EQ(first_control(html), -1);
  // The text around the controls stays.
  for (const char* format : kInvisibleFormats) {
    EXPECT_EQ(md.find(format), std::string::npos) << "U+ in UTF-8 " << format;
    EXPECT_EQ(html.find(format), std::string::npos) << format;
  }
  EXPECT_NE(md.find("red alert bell del c1 cr end rlognp.exe lrix ls ps almend"), std::string::npos) << md;
  EXPECT_NE(md.find("ctl"), std::string::npos);
}

}  // namespace
}  // namespace ncclbot::test
