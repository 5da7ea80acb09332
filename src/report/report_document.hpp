#pragma once
// The report as a list of format-neutral blocks built from results.json alone; report.md and
// report.html are two renderings of the same blocks, so they can never disagree.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ncclbot::report {

struct Block {
  enum class Kind { kHeading, kParagraph, kBullets, kTable, kFigure, kCode };
  Kind kind = Kind::kParagraph;
  int level = 2;                               // heading level
  std::string text;                            // heading, paragraph, code, figure caption
  std::vector<std::string> items;              // bullets
  std::vector<std::string> header;             // table
  std::vector<std::vector<std::string>> rows;  // table
  std::string file;                            // figure, relative to the report folder
};

// Blocks of one kind, their other fields empty (a table's rows are added by the caller).
Block heading(int level, std::string text);
Block paragraph(std::string text);
Block bullets(std::vector<std::string> items);
Block code(std::string text);
Block table_block(std::vector<std::string> header);
Block figure(std::string file, std::string caption);  // file relative to the report folder

// The figure block of one entry of figures/index.json ({"file", "caption"}).
Block figure_block(const nlohmann::json& figure);

// `figures` is figures/index.json as written by the figure script: [{"file", "caption"}, ...]
// (empty when no figures were drawn; `figures_note` then says why).
std::vector<Block> build_report(const nlohmann::json& results, const nlohmann::json& figures,
                                const std::string& figures_note);

std::string render_markdown(const std::vector<Block>& blocks);
// Self-contained: every figure is read from `report_dir` and embedded as a base64 data URI.
std::string render_html(const std::vector<Block>& blocks, const std::string& report_dir,
                        const std::string& title);

}  // namespace ncclbot::report
