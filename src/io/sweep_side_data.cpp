#include "ncclbot/io/sweep_side_data.hpp"

#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/io/atomic_file.hpp"

namespace ncclbot {
namespace {

// Each key, its bounds, and whether it is a count; one table for both readers and the writer.
struct DynamicsKey {
  const char* name;
  double lo, hi;
  bool count;
  float CallDynamics::*f = nullptr;
  int CallDynamics::*n = nullptr;
  double SweepDynamics::*d = nullptr;
};

const DynamicsKey kKeys[] = {
    {"job_warmup", 0.0, 100.0, false, &CallDynamics::job_warmup},
    {"job_warmup_calls", 0.0, 1e8, true, nullptr, &CallDynamics::job_warmup_calls},
    {"arm_warmup", 0.0, 100.0, false, &CallDynamics::arm_warmup},
    {"arm_warmup_calls", 0.0, 1e8, true, nullptr, &CallDynamics::arm_warmup_calls},
    {"shift_rate", 0.0, 0.999, false, &CallDynamics::shift_rate},
    {"shift_size", 0.0, 0.999, false, &CallDynamics::shift_size},
    {"shift_arm_size", 0.0, 0.999, false, &CallDynamics::shift_arm_size},
    {"first_use_base_us", 0.0, 1e9, false, nullptr, nullptr, &SweepDynamics::first_use_base_us},
    {"first_use_per_host_us", 0.0, 1e9, false, nullptr, nullptr, &SweepDynamics::first_use_per_host_us},
};

std::string value_text(const SweepDynamics& d, const DynamicsKey& k) {
  if (k.f) return format_float(d.call.*k.f);
  if (k.n) return std::to_string(d.call.*k.n);
  return format_double(d.*k.d);
}

// The known keys, comma separated, for the message of an unknown one.
std::string dynamics_key_list() {
  std::string list;
  for (const DynamicsKey& k : kKeys) list += (list.empty() ? "" : ", ") + std::string(k.name);
  return list;
}

}  // namespace

void set_dynamics_value(SweepDynamics& d, const std::string& key, std::string_view value,
                        const std::string& source, long line) {
  for (const DynamicsKey& k : kKeys) {
    if (key != k.name) continue;
    if (k.count) {
      const auto v = parse_int(value);
      if (!v || *v < int64_t(k.lo) || *v > int64_t(k.hi))
        throw InputError(source, line,
                         "dynamics " + key + " = '" + std::string(value) + "' is not an integer in [0, 1e8]");
      d.call.*k.n = int(*v);
      return;
    }
    const auto v = parse_double(value);
    if (!v || !(*v >= k.lo && *v <= k.hi))
      throw InputError(source, line,
                       "dynamics " + key + " = '" + std::string(value) + "' is not a number in [" +
                           format_double(k.lo) + ", " + format_double(k.hi) + "]");
    if (k.f)
      d.call.*k.f = float(*v);
    else
      d.*k.d = *v;
    return;
  }
  throw InputError(source, line, "unknown dynamics key '" + key + "' (valid: " + dynamics_key_list() + ")");
}

std::string sweep_side_data_path(const std::string& csv_path) {
  const std::filesystem::path p(csv_path);
  const std::string stem = p.extension() == ".csv" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + ".sweep.toml")).string();
}

std::string sweep_side_data_text(const SweepDynamics& dynamics, const std::string& samples) {
  if (!dynamics.any() && samples.empty()) return "";
  std::ostringstream out;
  out << "# Side data of the sweep CSV of the same name, read with it (ncclbot).\n";
  if (!samples.empty()) out << "samples = \"" << samples << "\"\n";
  if (dynamics.any()) {
    out << "[dynamics]\n";
    for (const DynamicsKey& k : kKeys) out << k.name << " = " << value_text(dynamics, k) << '\n';
  }
  return out.str();
}

namespace {
// A device or pipe (/dev/stdout, a FIFO): written in place, with no folder to put a side file in.
bool is_special_output(const std::string& csv_path) {
  std::error_code ec;
  const auto st = std::filesystem::status(csv_path, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
}
}  // namespace

void check_sweep_side_data_writable(const std::string& csv_path, const std::string& text) {
  if (!text.empty() && is_special_output(csv_path))
    throw UsageError("--out " + csv_path +
                     " is a device or pipe, but this sweep has call dynamics, which go to a side file "
                     "beside it (NAME.sweep.toml): give a file path");
}

void write_sweep_side_data(const std::string& csv_path, const std::string& text) {
  if (is_special_output(csv_path)) return;
  const std::string side_path = sweep_side_data_path(csv_path);
  if (!text.empty()) {
    try {
      write_file_atomic(side_path, text);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(side_path, ec)))
    std::filesystem::remove(side_path, ec);
}

SweepDynamics parse_sweep_side_data(std::string_view text, const std::string& source) {
  const TomlReader reader(source);
  const toml::table doc = reader.parse(text);
  reader.only_keys(doc, "the sweep's side data", {"samples", "dynamics"});
  if (const toml::node* samples = reader.find(doc, "samples")) {
    const std::string kind = reader.string(*samples, "samples");
    if (kind != "iterations" && kind != "mean")
      reader.fail(*samples, "samples must be \"iterations\" or \"mean\", not \"" + kind + "\"");
  }
  SweepDynamics d;
  const toml::node* node = reader.find(doc, "dynamics");
  if (!node) return d;
  const toml::table& t = reader.table(*node, "dynamics");
  for (const auto& [key, value] : t) {
    const std::string name(key.str());
    const long line = toml_line(value);
    if (!value.is_integer() && !value.is_floating_point())
      reader.fail(value, "dynamics " + name + " must be a number");
    const std::string shown =
        value.is_integer() ? std::to_string(*value.value<int64_t>()) : format_double(*value.value<double>());
    set_dynamics_value(d, name, shown, source, line);
  }
  for (const DynamicsKey& k : kKeys)
    if (!t.contains(k.name))
      reader.fail(*node, "dynamics lacks '" + std::string(k.name) + "' (a side file lists every key)");
  return d;
}

}  // namespace ncclbot
