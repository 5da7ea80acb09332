#include "study/study_variants.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <sstream>

#include "base/sha256.hpp"
#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

// The sweep knobs in the order the study file documents them.
constexpr const char* kSweepKnobs[] = {"noise_scale", "observation", "drift",     "shift_arm_size",
                                       "first_use",   "warmup",      "deviations"};

std::optional<nlohmann::json> sweep_knob(const Variant& v, std::string_view key) {
  if (key == "noise_scale" && v.noise_scale) return *v.noise_scale;
  if (key == "observation" && v.observation) return *v.observation;
  if (key == "drift" && v.drift) return *v.drift;
  if (key == "shift_arm_size" && v.shift_arm_size) return *v.shift_arm_size;
  if (key == "first_use" && v.first_use) return *v.first_use;
  if (key == "warmup" && v.warmup) return *v.warmup;
  if (key == "deviations" && v.deviations) return *v.deviations;
  return std::nullopt;
}

nlohmann::json sweep_value(const SweepSource& s, std::string_view key) {
  if (key == "noise_scale") return s.noise_scale;
  if (key == "observation") return s.observation;
  if (key == "drift") return s.drift;
  if (key == "shift_arm_size")
    return s.shift_arm_size < 0.0 ? nlohmann::json("the preset's") : nlohmann::json(s.shift_arm_size);
  if (key == "first_use") return s.first_use;
  if (key == "deviations") return s.deviations;
  return s.warmup;
}

// A sweep file's path as the variant's study file must name it: relative to the variant's folder
// (both resolved through symlinks, so the ".." steps are the real ones), absolute if there is none.
std::string path_from(const std::string& file, const std::string& dir) {
  std::error_code ec;
  const fs::path rel = fs::relative(fs::absolute(file, ec), fs::absolute(dir, ec), ec);
  if (ec || rel.empty()) return fs::absolute(file).lexically_normal().string();
  return rel.string();
}

}  // namespace

std::string variant_study_text(const StudySpec& base, const Variant& v, const std::string& variant_dir) {
  toml::table root = TomlReader(base.path).parse(base.text);
  root.erase("variant");
  if (auto* study = root["study"].as_table()) {
    study->erase("draws");  // the draws are the base study's variants; each runs once
    if (v.as_deployed) {
      study->insert_or_assign("as_deployed", *v.as_deployed);
      if (!v.delay) study->erase("delay");  // the plugin's measured delay in that mode
    }
    if (v.delay) study->insert_or_assign("delay", int64_t(*v.delay));
    if (v.observation_cost) study->insert_or_assign("observation_cost", *v.observation_cost);
  }
  if (auto* sweeps = root["sweep"].as_array())
    for (auto& node : *sweeps) {
      auto* t = node.as_table();
      if (!t) continue;
      const SweepSource& source = base.sweep(t->get_as<std::string>("name")->get());
      if (auto* file = t->get_as<std::string>("file")) {
        // The loader resolved it against the base study's folder; restate it for the variant's.
        *file = path_from(source.file, variant_dir);
        continue;
      }
      if (v.seed_offset) t->insert_or_assign("seed", int64_t(source.seed + uint64_t(*v.seed_offset)));
      for (const char* key : kSweepKnobs) {
        const auto value = sweep_knob(v, key);
        if (!value) continue;
        if (value->is_boolean())
          t->insert_or_assign(key, value->get<bool>());
        else if (value->is_string())
          t->insert_or_assign(key, value->get<std::string>());
        else
          t->insert_or_assign(key, value->get<double>());
      }
    }
  std::ostringstream text;
  text << "# ncclbot: the study '" << base.name << "' (study file sha256 " << sha256_hex(base.text)
       << ")\n# under its variant '" << v.name << "': " << knobs_text(variant_knobs(v))
       << "\n# (sweep knobs on every synthesised [[sweep]], delay, as_deployed and observation_cost in "
          "[study]"
       << (v.seed_offset ? "; seed_offset added to every synthesised [[sweep]]'s seed" : "")
       << "). Written by "
          "`ncclbot run`,\n"
       << "# keys in toml++'s order; it runs on its own: ncclbot run study.toml --out DIR\n"
       << toml::toml_formatter(root) << "\n";
  return text.str();
}

StudySpec variant_study(const StudySpec& base, const Variant& v, const std::string& variant_dir) {
  // Parsed from where it will live, so sweep files resolve as written; then named after what it is,
  // so the variant's results.json does not depend on where the run folder is.
  StudySpec s =
      parse_study(variant_study_text(base, v, variant_dir), (fs::path(variant_dir) / "study.toml").string());
  s.path = base.path + " with its variant '" + v.name + "'";
  return s;
}

nlohmann::json variant_knobs(const Variant& v) {
  nlohmann::json k = nlohmann::json::object();
  for (const char* key : kSweepKnobs)
    if (const auto value = sweep_knob(v, key)) k[key] = *value;
  if (v.delay) k["delay"] = *v.delay;
  if (v.as_deployed) k["as_deployed"] = *v.as_deployed;
  if (v.observation_cost) k["observation_cost"] = *v.observation_cost;
  if (v.seed_offset) k["seed_offset"] = *v.seed_offset;
  return k;
}

nlohmann::json baseline_knobs(const StudySpec& base) {
  nlohmann::json k = nlohmann::json::object();
  for (const auto& v : base.variants) {
    if (v.delay) k["delay"] = base.delay;
    if (v.as_deployed) k["as_deployed"] = scoring_name(base.as_deployed);
    if (v.observation_cost)
      k["observation_cost"] =
          base.observation_cost ? nlohmann::json(*base.observation_cost) : nlohmann::json();
    if (v.seed_offset) k["seed_offset"] = 0;
    for (const char* key : kSweepKnobs) {
      if (!sweep_knob(v, key)) continue;
      nlohmann::json value;  // null until a synthesised sweep says, and when two disagree
      bool first = true;
      for (const auto& s : base.sweeps) {
        if (!s.file.empty()) continue;
        const nlohmann::json x = sweep_value(s, key);
        if (first)
          value = x;
        else if (value != x)
          value = nullptr;
        first = false;
      }
      k[key] = value;
    }
  }
  return k;
}

std::string knobs_text(const nlohmann::json& knobs) {
  std::string out;
  for (const auto& [key, value] : knobs.items())
    out += (out.empty() ? "" : ", ") + key + " = " + (value.is_null() ? std::string("mixed") : value.dump());
  return out;
}

}  // namespace ncclbot::study
