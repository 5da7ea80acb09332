#include "study/unit_result.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/sha256.hpp"

namespace ncclbot::study {
namespace {

nlohmann::json summary_json(const LossSummary& s) {
  return {{"mean", s.mean}, {"p99", s.p99}, {"max", s.max}, {"above_10pct", s.above_10pct}};
}

LossSummary summary_from(const nlohmann::json& j) {
  LossSummary s;
  s.mean = j.at("mean").get<double>();
  s.p99 = j.at("p99").get<double>();
  s.max = j.at("max").get<double>();
  s.above_10pct = j.at("above_10pct").get<long>();
  return s;
}

}  // namespace

nlohmann::json to_json(const PromiseCheck& p) {
  return {{"alpha", p.alpha},
          {"contexts", p.contexts},
          {"seeds", p.seeds},
          {"horizon", p.horizon},
          {"replays_broken", p.replays_broken},
          {"seeds_broken", p.seeds_broken},
          {"first_break_call", p.first_break_call}};
}

PromiseCheck promise_from_json(const nlohmann::json& j) {
  PromiseCheck p;
  p.alpha = j.at("alpha").get<double>();
  p.contexts = j.at("contexts").get<int>();
  p.seeds = j.at("seeds").get<int>();
  p.horizon = j.at("horizon").get<int>();
  p.replays_broken = j.at("replays_broken").get<int64_t>();
  p.seeds_broken = j.at("seeds_broken").get<int64_t>();
  p.first_break_call = j.at("first_break_call").get<int64_t>();
  return p;
}

nlohmann::json to_json(const UnitResult& u) {
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& g : u.grid) grid.push_back({{"config", g.config}, {"tune", summary_json(g.tune)}});
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& c : u.curve) curve.push_back({{"horizon", c.horizon}, {"mean_online", c.mean_online}});
  nlohmann::json long_curve = nlohmann::json::array();
  for (const auto& c : u.loss_vs_horizon)
    long_curve.push_back({{"horizon", c.horizon}, {"mean_online", c.mean_online}});
  nlohmann::json out = {{"scenario", u.scenario},
                        {"policy", u.policy},
                        {"spec", u.spec},
                        {"inputs_sha256", u.inputs_sha256},
                        {"grid", grid},
                        {"chosen", u.chosen},
                        {"online", u.online},
                        {"final", u.final_loss},
                        {"final_slot", u.final_slot},
                        {"watched", u.watched},
                        {"curve", curve},
                        {"loss_vs_horizon", long_curve}};
  if (u.promise) out["promise"] = to_json(*u.promise);
  return out;
}

UnitResult unit_from_json(const nlohmann::json& j) {
  try {
    UnitResult u;
    u.scenario = j.at("scenario").get<std::string>();
    u.policy = j.at("policy").get<std::string>();
    u.spec = j.at("spec").get<std::string>();
    u.inputs_sha256 = j.at("inputs_sha256").get<std::string>();
    for (const auto& g : j.at("grid"))
      u.grid.push_back({g.at("config").get<std::string>(), summary_from(g.at("tune"))});
    u.chosen = j.at("chosen").get<int>();
    u.online = j.at("online").get<std::vector<double>>();
    u.final_loss = j.at("final").get<std::vector<double>>();
    u.final_slot = j.at("final_slot").get<std::vector<int>>();
    u.watched = j.at("watched").get<std::vector<double>>();
    for (const auto& c : j.at("curve"))
      u.curve.push_back({c.at("horizon").get<int>(), c.at("mean_online").get<double>()});
    for (const auto& c : j.at("loss_vs_horizon"))
      u.loss_vs_horizon.push_back({c.at("horizon").get<int>(), c.at("mean_online").get<double>()});
    if (j.contains("promise")) u.promise = promise_from_json(j.at("promise"));
    if (u.chosen < 0 || size_t(u.chosen) >= u.grid.size() || u.online.size() != u.final_loss.size() ||
        u.online.size() != u.final_slot.size() || u.online.size() != u.watched.size())
      throw std::runtime_error("inconsistent unit");
    return u;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed unit: ") + e.what());
  }
}

std::string unit_file_name(const std::string& scenario, const std::string& policy) {
  std::string safe;
  for (char c : scenario + "__" + policy)
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  // Names like "a/b" and "a_b" would collide once sanitised; a short digest keeps them apart.
  return safe + "-" + sha256_hex(scenario + "\n" + policy).substr(0, 8) + ".json";
}

}  // namespace ncclbot::study
