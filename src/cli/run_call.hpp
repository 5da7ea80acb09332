#pragma once
// `run` as a library call: study::run_study (run/run_study.hpp) takes the typed options and returns
// the summary; this is the document `run --json` prints of it.
#include <nlohmann/json.hpp>

#include "run/run_study.hpp"

namespace ncclbot::cli {

// The output paths and unit counts of a study's run, and of each of its variants.
nlohmann::json run_document(const study::RunSummary& summary);

}  // namespace ncclbot::cli
