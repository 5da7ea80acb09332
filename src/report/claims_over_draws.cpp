#include "report/claims_over_draws.hpp"

#include <map>
#include <string>

#include "report/claim_tally.hpp"

namespace ncclbot::report {
namespace {

using json = nlohmann::json;

// A draw: the baseline, or a variant whose only knob is its seed offset.
bool is_draw(const json& entry) {
  if (entry.value("variant", "") == "baseline") return true;
  const json& k = entry.at("knobs");
  return k.size() == 1 && k.contains("seed_offset");
}

}  // namespace

json claims_over_draws(const json& sensitivity) {
  json claims = json::array();
  std::map<std::string, size_t> row_of;
  int draws = 0;
  ClaimTally total;
  for (const auto& entry : sensitivity) {
    if (!is_draw(entry) || !entry.contains("claims")) continue;
    ++draws;
    total += tally_claims(entry.at("claims"));
    for (const auto& c : entry.at("claims")) {
      const std::string claim = c.at("claim");
      auto [at, added] = row_of.emplace(claim, claims.size());
      if (added)
        claims.push_back({{"claim", claim},
                          {"basis", c.at("basis")},
                          {"agree", 0},
                          {"disagree", 0},
                          {"inconclusive", 0},
                          {"untestable", 0}});
      const std::string verdict = c.at("verdict");
      json& row = claims[at->second];
      row[verdict] = row[verdict].get<int>() + 1;
    }
  }
  if (draws < 2 || claims.empty()) return nullptr;
  const json tally = {
      {"agree", total.agree}, {"disagree", total.disagree}, {"inconclusive", total.inconclusive}};
  return {{"draws", draws}, {"claims", std::move(claims)}, {"tally", tally}};
}

namespace {

bool has_draws(const json& results) {
  return results.contains("claims_over_draws") && !results.at("claims_over_draws").is_null();
}

// "59 agree, 31 disagree, 60 inconclusive of 150 (claim, draw) pairs".
std::string tally_over_draws(const json& d) {
  const json& t = d.at("tally");
  ClaimTally n;
  n.agree = t.at("agree");
  n.disagree = t.at("disagree");
  n.inconclusive = t.at("inconclusive");
  n.tested = n.agree + n.disagree + n.inconclusive;
  return tally_text(n, "(claim, draw) pairs");
}

}  // namespace

std::string claims_over_draws_headline(const json& results) {
  if (!has_draws(results)) return "";
  const json& d = results.at("claims_over_draws");
  return "over " + std::to_string(d.at("draws").get<int>()) +
         " draws of the simulator: " + tally_over_draws(d);
}

std::vector<Block> claims_over_draws_section(const json& results) {
  if (!has_draws(results)) return {};
  const json& d = results.at("claims_over_draws");
  const int draws = d.at("draws");
  std::vector<Block> out;
  out.push_back(heading(3, "Over " + std::to_string(draws) + " draws of the simulator"));
  out.push_back(paragraph(
      "The same claims on " + std::to_string(draws) +
      " draws of the simulator: the study's sweeps as given, and each again with every synthesised sweep's "
      "seed moved by 1 to " +
      std::to_string(draws - 1) +
      " (the variants \"draw 2\" onward, in variants/). Over the tested claims and draws: " +
      tally_over_draws(d) + ". Each row counts the draws with each verdict."));
  Block table = table_block({"claim", "basis", "agree", "disagree", "inconclusive", "untestable"});
  for (const auto& c : d.at("claims"))
    table.rows.push_back(
        {c.at("claim").get<std::string>(), c.at("basis").get<std::string>(),
         std::to_string(c.at("agree").get<int>()), std::to_string(c.at("disagree").get<int>()),
         std::to_string(c.at("inconclusive").get<int>()), std::to_string(c.at("untestable").get<int>())});
  out.push_back(std::move(table));
  return out;
}

}  // namespace ncclbot::report
