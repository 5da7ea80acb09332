// report.html keeps a link live only for http, https or a relative target: study text (a claim, a
// variant name) is the user's, and a `javascript:` link in it must not become clickable code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "report/report_document.hpp"

using namespace ncclbot::report;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

TEST(ReportLinks, OnlyHttpHttpsAndRelativeTargetsStayLive) {
  Block p;
  p.text =
      "[a](javascript:alert(1)) [b](https://example.org/x) [c](docs/study.md) <javascript:alert(2)> "
      "[d](JaVaScRiPt:alert(3)) [e](data:text/html,hi) [f](#verdict) [g](http://example.org) "
      "[h](vbscript:x) [i](./a:b)";
  const std::string html = lower(render_html({p}, "/nonexistent", "t"));
  for (const char* bad : {"href=\"javascript", "href=\"data:", "href=\"vbscript"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad << " in " << html;
  for (const char* good : {"href=\"https://example.org/x\"", "href=\"docs/study.md\"", "href=\"#verdict\"",
                           "href=\"http://example.org\"", "href=\"./a:b\""})
    EXPECT_NE(html.find(good), std::string::npos) << good << " missing in " << html;
  // The dead links keep their text.
  EXPECT_NE(html.find(">a</a>"), std::string::npos) << html;
  EXPECT_NE(html.find(">d</a>"), std::string::npos) << html;
}

// An image in study text loses its source: a `javascript:` one, and a remote one the report would
// load when it opens. The figures the report embeds (PNG data URIs) keep theirs; the alt text stays.
TEST(ReportLinks, OnlyTheEmbeddedFiguresKeepAnImageSource) {
  Block p;
  p.text =
      "![a](javascript:alert(1)) ![b](http://example.org/track.png) ![c](data:text/html,hi) "
      "![d](data:image/png;base64,iVBORw0KGgo=)";
  const std::string html = lower(render_html({p}, "/nonexistent", "t"));
  for (const char* bad : {"src=\"javascript", "src=\"http", "src=\"data:text"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad << " in " << html;
  EXPECT_NE(html.find("src=\"data:image/png;base64,ivborw0kggo=\""), std::string::npos) << html;
  EXPECT_NE(html.find("alt=\"a\""), std::string::npos) << html;
}
