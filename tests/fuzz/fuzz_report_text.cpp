// libFuzzer target: study text (a claim, a variant name, a hypothesis: the user's words) on its way
// into report.html. The input is cut at NUL bytes into a title, a paragraph, a bullet and a table
// cell; whatever they hold, the page has no live link but http, https or relative ones, no image
// source but the embedded PNG figures, and no raw markup (a <script>, an <iframe>, an inline
// handler): md4c escapes raw HTML and render_html() kills every other target.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "report/report_document.hpp"

using namespace ncclbot::report;

namespace {

std::vector<std::string> pieces(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && out.size() < 4)
      out.emplace_back();
    else
      out.back() += char(data[i]);
  }
  out.resize(4);
  return out;
}

// Every value of `attribute` in the tags of `html`. Each tag is read from its '<' to its '>', its
// attributes as name=value pairs with the value in double or single quotes or bare; text never
// holds a raw '<' (md4c and render_html() escape it), so every '<' opens a tag, and a value is
// never mistaken for an attribute (an image's alt text "x src=" is not a source). A tag or quoted
// value without its end aborts.
std::vector<std::string> values(const std::string& html, const std::string& attribute) {
  std::vector<std::string> out;
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const size_t n = html.size();
  for (size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at)) {
    size_t i = at + 1;
    while (i < n && !space(html[i]) && html[i] != '>') ++i;  // the tag's name
    while (true) {
      while (i < n && (space(html[i]) || html[i] == '/')) ++i;
      if (i >= n) std::abort();
      if (html[i] == '>') break;
      const size_t name_at = i;
      while (i < n && !space(html[i]) && html[i] != '=' && html[i] != '>') ++i;
      const std::string name = html.substr(name_at, i - name_at);
      if (i >= n || html[i] != '=') continue;  // an attribute without a value
      ++i;
      std::string value;
      if (i < n && (html[i] == '"' || html[i] == '\'')) {
        const size_t end = html.find(html[i], i + 1);
        if (end == std::string::npos) std::abort();
        value = html.substr(i + 1, end - i - 1);
        i = end + 1;
      } else {
        const size_t from = i;
        while (i < n && !space(html[i]) && html[i] != '>') ++i;
        value = html.substr(from, i - from);
      }
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return char(std::tolower(c)); });
      if (lower == attribute) out.push_back(value);
    }
    at = i + 1;
  }
  return out;
}

bool live_target(const std::string& href) {
  const size_t colon = href.find(':');
  if (colon == std::string::npos || href.find_first_of("/?#") < colon) return true;
  std::string scheme = href.substr(0, colon);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return scheme == "http" || scheme == "https";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> text = pieces(data, size);
  std::vector<Block> blocks(4);
  blocks[0].kind = Block::Kind::kHeading;
  blocks[0].text = text[0];
  blocks[1].kind = Block::Kind::kParagraph;
  blocks[1].text = text[1];
  blocks[2].kind = Block::Kind::kBullets;
  blocks[2].items = {text[2]};
  blocks[3].kind = Block::Kind::kTable;
  blocks[3].header = {"claim", "why"};
  blocks[3].rows = {{text[3], text[1]}};
  std::string html;
  try {
    html = render_html(blocks, "/nonexistent", text[0]);
  } catch (const std::runtime_error&) {
    return 0;  // md4c refused the text: nothing written
  }
  // The title is text (its '<' escaped), so a quote in it is no attribute: check the body.
  const size_t body_at = html.find("<body>");
  if (body_at == std::string::npos) std::abort();
  html.erase(0, body_at);
  for (const std::string& href : values(html, "href"))
    if (!live_target(href)) std::abort();
  for (const std::string& src : values(html, "src"))
    if (!src.empty() && src.rfind("data:image/png;base64,", 0) != 0) std::abort();
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char* tag : {"<script", "<iframe", "<object", "<embed", "<svg", "<style", "<link", "<meta http"})
    if (lower.find(tag) != std::string::npos) std::abort();
  return 0;
}
