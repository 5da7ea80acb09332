#include "study/checkpoint.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/sha256.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot::study {
namespace {

constexpr const char* kChecksumKey = "checkpoint_sha256";

// The checksum of a checkpoint document without its checksum (keys in nlohmann's sorted order, so
// a parsed document gives the bytes it was written from).
std::string checksum_of(const nlohmann::json& content) {
  return sha256_hex(content.dump());
}

// The unit in `text`; throws std::runtime_error saying why it may not be used.
UnitResult checked_unit(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("it is not valid JSON");
  }
  if (!j.is_object() || !j.contains(kChecksumKey) || !j[kChecksumKey].is_string())
    throw std::runtime_error("it has no checksum (written by an older ncclbot?)");
  const std::string sum = j[kChecksumKey].get<std::string>();
  j.erase(kChecksumKey);
  if (checksum_of(j) != sum) throw std::runtime_error("its checksum does not match its content");
  return unit_from_json(j);
}

}  // namespace

std::string checkpoint_text(const UnitResult& u) {
  nlohmann::json j = to_json(u);
  j[kChecksumKey] = checksum_of(j);
  return j.dump(1) + "\n";
}

std::optional<UnitResult> reusable_checkpoint(const std::string& path, const PreparedStudy& study,
                                              const WorkUnit& unit, std::string& why) {
  why.clear();
  try {
    // Not a FIFO: the checkpoint is rewritten in its place when unusable, which would then stall.
    const auto text = read_input_file_if_exists(path, kMaxPartialBytes, false);
    if (!text) return std::nullopt;
    UnitResult u = checked_unit(*text);
    const auto& sc = study.scenarios[size_t(unit.scenario)];
    if (u.inputs_sha256 != unit.inputs_sha256)
      why = "it was computed from other inputs (the study, its sweeps or the program changed)";
    else if (u.scenario != sc.spec->name || u.policy != study.policies[size_t(unit.policy)].spec->name)
      why = "it holds another unit";
    else if (u.online.size() != sc.score.size())
      why = "it has " + std::to_string(u.online.size()) + " score contexts, the scenario " +
            std::to_string(sc.score.size());
    if (why.empty()) return u;
  } catch (const std::exception& e) {
    why = e.what();
  }
  return std::nullopt;
}

}  // namespace ncclbot::study
