#pragma once
// A unit's checkpoint file (DIR/units/NAME.json): the unit's result plus `checkpoint_sha256`, the
// SHA-256 of the rest of the document, which holds inputs_sha256 (the digest of everything the unit
// was computed from). A checkpoint is reused only when its checksum matches its content and it is
// the unit asked for, computed from the same inputs; a damaged, edited, stale or foreign one, or
// one without a checksum (written by an older ncclbot), is recomputed.
#include <optional>
#include <string>

#include "study/prepared_study.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {

// The checkpoint's bytes: the same for `run` and `run-units`, so either reuses the other's.
std::string checkpoint_text(const UnitResult& u);

// The checkpoint at `path` if it may be reused for `unit` of `study`, else nullopt; `why` then says
// what is wrong with the file, or stays empty when there is none.
std::optional<UnitResult> reusable_checkpoint(const std::string& path, const PreparedStudy& study,
                                              const WorkUnit& unit, std::string& why);

}  // namespace ncclbot::study
