#pragma once
// The study a [[variant]] stands for: the base study file with the variant's knobs written into it
// (the sweep knobs into every synthesised [[sweep]], `delay` into [study]) and its [[variant]]
// tables left out. DIR/variants/SLUG/study.toml holds that text, so a variant is an ordinary study
// that `ncclbot run` reproduces on its own, and its numbers are those of the base study with the
// knobs set by hand.
#include <nlohmann/json.hpp>
#include <string>

#include "study/study_spec.hpp"

namespace ncclbot::study {

// `variant_dir` is the folder the text will live in: sweep files are written relative to it.
std::string variant_study_text(const StudySpec& base, const Variant& v, const std::string& variant_dir);

// variant_study_text parsed as if read from VARIANT_DIR/study.toml; its `path` (results.json's
// study.source, and the file its error messages name) is "BASE with its variant 'NAME'".
StudySpec variant_study(const StudySpec& base, const Variant& v, const std::string& variant_dir);

// The knobs a variant sets, e.g. {"noise_scale": 0.5}.
nlohmann::json variant_knobs(const Variant& v);

// The base study's value of every knob that some variant sets: delay, and a sweep knob's value when
// every synthesised sweep has the same one (null when they differ).
nlohmann::json baseline_knobs(const StudySpec& base);

// "noise_scale = 0.5, delay = 512", in the key order of the JSON object.
std::string knobs_text(const nlohmann::json& knobs);

}  // namespace ncclbot::study
