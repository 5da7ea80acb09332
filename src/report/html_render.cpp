// report.html: one self-contained file (inline CSS, figures as base64 data URIs) that opens in any
// browser without the figures folder next to it.
#include <sodium.h>

#include <fstream>
#include <sstream>

#include "ncclbot/io/output_file.hpp"
#include "report/report_document.hpp"

namespace ncclbot::report {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Inline `code` spans of the Markdown text become <code>; everything else is escaped.
std::string inline_text(const std::string& s) {
  std::string out;
  bool in_code = false;
  std::string run;
  for (char c : s) {
    if (c == '`') {
      out += in_code ? "<code>" + escape(run) + "</code>" : escape(run);
      run.clear();
      in_code = !in_code;
    } else {
      run += c;
    }
  }
  out += in_code ? "`" + escape(run) : escape(run);
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

}  // namespace

std::string render_html(const std::vector<Block>& blocks, const std::string& report_dir,
                        const std::string& title) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  for (const auto& b : blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        const std::string tag = "h" + std::to_string(b.level);
        h += "<" + tag + ">" + inline_text(b.text) + "</" + tag + ">\n";
        break;
      }
      case Block::Kind::kParagraph:
        h += "<p>" + inline_text(b.text) + "</p>\n";
        break;
      case Block::Kind::kBullets:
        h += "<ul>\n";
        for (const auto& i : b.items) h += "<li>" + inline_text(i) + "</li>\n";
        h += "</ul>\n";
        break;
      case Block::Kind::kTable:
        h += "<table>\n<tr>";
        for (const auto& c : b.header) h += "<th>" + inline_text(c) + "</th>";
        h += "</tr>\n";
        for (const auto& row : b.rows) {
          h += "<tr>";
          for (const auto& c : row) h += "<td>" + inline_text(c) + "</td>";
          h += "</tr>\n";
        }
        h += "</table>\n";
        break;
      case Block::Kind::kFigure:
        h += "<figure><img alt=\"" + escape(b.text) + "\" src=\"data:image/png;base64," +
             base64(read_binary(report_dir + "/" + b.file)) + "\"><figcaption>" + inline_text(b.text) +
             "</figcaption></figure>\n";
        break;
      case Block::Kind::kCode:
        h += "<pre><code>" + escape(b.text) + "</code></pre>\n";
        break;
    }
  }
  return h + "</body>\n</html>\n";
}

}  // namespace ncclbot::report
