// report.html: one self-contained file (inline CSS, figures as base64 data URIs) that opens in any
// browser without the figures folder next to it.
#include <md4c-html.h>
#include <sodium.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "ncclbot/io/output_file.hpp"
#include "report/plain_text.hpp"
#include "report/report_document.hpp"

namespace ncclbot::report {
namespace {

// The page title is plain text, not Markdown.
std::string escape_text(const std::string& s) {
  std::string out;
  for (char c : printable_text(s, false))
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

// Standard base64 with padding (RFC 4648), libsodium's encoder.
std::string base64(const std::string& bytes) {
  const size_t size = sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  std::string out(size, '\0');
  sodium_bin2base64(out.data(), size, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(size - 1);  // the encoder's terminating NUL
  return out;
}

// A figure to embed; a missing one embeds nothing, and its size is capped like every input's.
std::string read_binary(const std::string& path) {
  return read_input_file_if_exists(path, kMaxConfigBytes * 16).value_or("");
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:0.9em}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}"
    "code,pre{background:#f5f5f5;font-family:ui-monospace,monospace}pre{padding:0.8em;overflow-x:auto}"
    "figure{margin:1.5em 0}img{max-width:100%}figcaption{font-style:italic;color:#555}";

// Whether a link target may stay live: http, https, or relative (no scheme: a scheme is what comes
// before the first ':' when no '/', '?' or '#' comes first). Study text (claims, variant names) is
// the user's, so `javascript:` and every other scheme become dead links.
bool safe_target(const std::string& href) {
  const size_t colon = href.find(':');
  if (colon == std::string::npos || href.find_first_of("/?#") < colon) return true;
  std::string scheme = href.substr(0, colon);
  for (char& c : scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
  return scheme == "http" || scheme == "https";
}

// Whether an image source may stay: only the figures render_html() embeds (PNG data URIs). An image
// in study text would load a remote file, or carry a `javascript:` source, when the report opens.
bool safe_image(const std::string& src) {
  return src.rfind("data:image/png;base64,", 0) == 0;
}

// md4c's links with any other target keep their text and lose the target (href="#"); images with
// any other source lose it (src="", their alt text stays).
std::string neutralise_links(const std::string& html) {
  struct Attribute {
    std::string_view open;
    bool (*safe)(const std::string&);
    const char* dead;
  };
  static constexpr Attribute kAttributes[] = {{"<a href=\"", safe_target, "#"},
                                              {"<img src=\"", safe_image, ""}};
  std::string out;
  size_t at = 0;
  while (true) {
    size_t found = std::string::npos;
    const Attribute* which = nullptr;
    for (const Attribute& a : kAttributes)
      if (const size_t f = html.find(a.open, at); f < found) {
        found = f;
        which = &a;
      }
    if (which == nullptr) break;
    const size_t value = found + which->open.size(), end = html.find('"', value);
    if (end == std::string::npos) break;
    out.append(html, at, value - at);
    const std::string target = html.substr(value, end - value);
    out += which->safe(target) ? target : which->dead;
    at = end;
  }
  out.append(html, at, std::string::npos);
  return out;
}

}  // namespace

std::string render_html(const std::vector<Block>& blocks, const std::string& report_dir,
                        const std::string& title) {
  // The HTML body is md4c's rendering of the Markdown report, with every figure's file replaced by
  // its contents as a data URI. Raw HTML in a cell (a policy name with '<') is text, not markup.
  std::vector<Block> embedded = blocks;
  for (Block& b : embedded)
    if (b.kind == Block::Kind::kFigure)
      b.file = "data:image/png;base64," + base64(read_binary(report_dir + "/" + b.file));
  const std::string md = render_markdown(embedded);
  std::string body;
  const auto append = [](const MD_CHAR* text, MD_SIZE size, void* out) {
    static_cast<std::string*>(out)->append(text, size);
  };
  if (md_html(md.data(), MD_SIZE(md.size()), append, &body, MD_FLAG_TABLES | MD_FLAG_NOHTML, 0) != 0)
    throw std::runtime_error("md4c could not render the report's Markdown");
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         escape_text(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n" +
         neutralise_links(body) + "</body>\n</html>\n";
}

}  // namespace ncclbot::report
