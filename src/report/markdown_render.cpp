// report.md: GitHub-flavoured Markdown; figures are linked, not embedded (report.html embeds them).
#include "report/report_document.hpp"

namespace ncclbot::report {
namespace {

// Policy specs contain '|' (grids); in a table cell it would split the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
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
        md += std::string(size_t(b.level), '#') + " " + b.text + "\n\n";
        break;
      case Block::Kind::kParagraph:
        md += b.text + "\n\n";
        break;
      case Block::Kind::kBullets:
        for (const auto& i : b.items) md += "- " + i + "\n";
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
        md += "![" + b.text + "](" + b.file + ")\n\n*" + b.text + "*\n\n";
        break;
      case Block::Kind::kCode:
        md += "```\n" + b.text + "\n```\n\n";
        break;
    }
  }
  return md;
}

}  // namespace ncclbot::report
