// report.md: GitHub-flavoured Markdown; figures are linked, not embedded (report.html embeds them).
#include "report/plain_text.hpp"
#include "report/report_document.hpp"

namespace ncclbot::report {
namespace {

// One-line text: a heading, a table cell, a caption.
std::string line(const std::string& s) {
  return printable_text(s, false);
}

// Policy specs contain '|' (grids); in a table cell it would split the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : line(s)) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string render_markdown(const std::vector<Block>& blocks) {
  std::string md;
  for (const auto& b : blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading:
        md += std::string(size_t(b.level), '#') + " " + line(b.text) + "\n\n";
        break;
      case Block::Kind::kParagraph:
        md += printable_text(b.text, true) + "\n\n";
        break;
      case Block::Kind::kBullets:
        for (const auto& i : b.items) md += "- " + printable_text(i, true) + "\n";
        md += "\n";
        break;
      case Block::Kind::kTable: {
        md += "|";
        for (const auto& h : b.header) md += " " + cell(h) + " |";
        md += "\n|";
        for (size_t i = 0; i < b.header.size(); ++i) md += " --- |";
        md += "\n";
        for (const auto& row : b.rows) {
          md += "|";
          for (const auto& c : row) {
            md += ' ';
            md += cell(c);
            md += " |";
          }
          md += "\n";
        }
        md += "\n";
        break;
      }
      case Block::Kind::kFigure:
        md += "![" + line(b.text) + "](" + line(b.file) + ")\n\n*" + line(b.text) + "*\n\n";
        break;
      case Block::Kind::kCode:
        md += "```\n" + printable_text(b.text, true) + "\n```\n\n";
        break;
    }
  }
  return md;
}

}  // namespace ncclbot::report
