#pragma once
// A sweep's side data: what a sweep carries besides its rows (today the call dynamics of a simulated
// sweep, core/call_dynamics.hpp), kept in a small TOML file beside the CSV so the CSV stays plain
// (pandas.read_csv and csv.DictReader read it with no options):
//   h100.csv          the rows
//   h100.sweep.toml   samples = "iterations"   (ingest: what one sample is, "iterations" or "mean")
//                     [dynamics] job_warmup = 0.5  job_warmup_calls = 200 ...
// Sweeps written before the side file existed carry their dynamics in a leading
// "# dynamics: key=value ..." line of the CSV; the readers still take it, and a sweep with both is
// refused (which one would be meant is unknowable).
#include <string>
#include <string_view>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

// The side file of the sweep at `csv_path`: its name without ".csv", then ".sweep.toml".
std::string sweep_side_data_path(const std::string& csv_path);

// The side file's text for `dynamics` and, from ingest, what one sample is (`samples`: "iterations"
// or "mean", empty for none); empty when there is neither (no file is written then).
std::string sweep_side_data_text(const SweepDynamics& dynamics, const std::string& samples = "");

// Writes `text` to `side_path` (atomically), or with empty text removes a side file left there by
// an earlier sweep of that name. Beside a CSV written to a device or pipe (`csv_is_special`) nothing
// is touched; side data to write there is a UsageError, raised before the CSV is written.
void check_sweep_side_data_writable(const std::string& csv_path, const std::string& text);
void write_sweep_side_data(const std::string& csv_path, const std::string& text);

// The dynamics in side-file text (`source` names it in errors); every key is checked as strictly as
// the legacy line's.
SweepDynamics parse_sweep_side_data(std::string_view text, const std::string& source);

// One dynamics setting by name from its text, bounds checked; an unknown key (the message lists the
// known ones) or a bad value is an InputError at (source, line). Shared by the side file and the
// legacy "# dynamics:" line.
void set_dynamics_value(SweepDynamics& d, const std::string& key, std::string_view value,
                        const std::string& source, long line);

}  // namespace ncclbot
