// Loading fabric presets from data/fabrics/*.toml. Strict: a missing or unknown key, a wrong type or
// an out-of-range value is an InputError naming the file, the line and the reason.
#include <fmt/format.h>
#include <toml++/toml.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::sim {
namespace {

namespace fs = std::filesystem;

// The strict TOML reader (io/toml_reader.hpp) with what a preset adds: "[section] key" names,
// range messages that give the value, and a record of the keys read, so none goes unread.
class PresetReader : public TomlReader {
 public:
  PresetReader(std::string file, const toml::table& root) : TomlReader(std::move(file)), root_(root) {}
  using TomlReader::fail;

  const toml::table& table(const std::string& key) {
    const toml::node* n = root_.get(key);
    if (!n) fail(0, "missing table [" + key + "]");
    if (!n->is_table()) fail(toml_line(*n), "'" + key + "' must be a table");
    seen_[""].insert(key);
    return *n->as_table();
  }

  const toml::node& node(const toml::table& t, const std::string& section, const std::string& key) {
    const toml::node* n = t.get(key);
    if (!n) fail(toml_line(t), "[" + section + "] is missing '" + key + "'");
    seen_[section].insert(key);
    return *n;
  }
  bool has(const toml::table& t, const std::string& key) const { return t.get(key) != nullptr; }

  double number(const toml::table& t, const std::string& section, const std::string& key, double lo,
                double hi) {
    const toml::node& n = node(t, section, key);
    const double v = TomlReader::number(n, "'" + key + "'");
    if (!(v >= lo && v <= hi))
      fail(toml_line(n), "'" + key + "' = " + format_double(v) + " is outside [" + format_double(lo) + ", " +
                             format_double(hi) + "]");
    return v;
  }
  int integer(const toml::table& t, const std::string& section, const std::string& key, int lo, int hi) {
    const toml::node& n = node(t, section, key);
    const int64_t v = TomlReader::integer(n, "'" + key + "'");
    if (v < lo || v > hi)
      fail(toml_line(n), "'" + key + "' = " + std::to_string(v) + " is outside [" + std::to_string(lo) +
                             ", " + std::to_string(hi) + "]");
    return int(v);
  }
  bool boolean(const toml::table& t, const std::string& section, const std::string& key) {
    return TomlReader::boolean(node(t, section, key), "'" + key + "'");
  }
  std::string string(const toml::table& t, const std::string& section, const std::string& key) {
    return TomlReader::string(node(t, section, key), "'" + key + "'");
  }
  // A [lo, hi] pair or a single number (lo == hi).
  Range range(const toml::table& t, const std::string& section, const std::string& key, double lo,
              double hi) {
    const toml::node& n = node(t, section, key);
    Range r;
    if (auto d = n.value<double>()) {
      r.lo = r.hi = *d;
    } else if (const toml::array* a = n.as_array();
               a && a->size() == 2 && (*a)[0].value<double>() && (*a)[1].value<double>()) {
      r.lo = *(*a)[0].value<double>();
      r.hi = *(*a)[1].value<double>();
    } else {
      fail(toml_line(n), "'" + key + "' must be a number or a [lo, hi] pair");
    }
    if (!(r.lo <= r.hi)) fail(toml_line(n), "'" + key + "': lo must not exceed hi");
    if (!(r.lo >= lo && r.hi <= hi))
      fail(toml_line(n), "'" + key + "' is outside [" + format_double(lo) + ", " + format_double(hi) + "]");
    return r;
  }
  std::vector<int> int_list(const toml::table& t, const std::string& section, const std::string& key) {
    const toml::node& n = node(t, section, key);
    const toml::array* a = n.as_array();
    if (!a || a->empty()) fail(toml_line(n), "'" + key + "' must be a non-empty list of integers");
    std::vector<int> out;
    for (const toml::node& e : *a) {
      if (!e.is_integer() || e.as_integer()->get() < 1 || e.as_integer()->get() > 4096)
        fail(toml_line(e), "'" + key + "' entries must be integers in [1, 4096]");
      out.push_back(int(e.as_integer()->get()));
    }
    return out;
  }

  // Every key of every table must have been read: a typo must not silently become a default.
  void reject_unknown_keys() const {
    for (auto&& [k, v] : root_) {
      const std::string key(k.str());
      if (!seen_.at("").count(key)) fail(toml_line(v), "unknown key " + quoted_value(key));
      if (const toml::table* t = v.as_table()) {
        const auto it = seen_.find(key);
        for (auto&& [k2, v2] : *t)
          if (it == seen_.end() || !it->second.count(std::string(k2.str())))
            fail(toml_line(v2), "unknown key '" + std::string(k2.str()) + "' in [" + key + "]");
      }
    }
  }
  void mark_top(const std::string& key) { seen_[""].insert(key); }
  void mark(const std::string& section, const std::string& key) { seen_[section].insert(key); }
  bool was_read(const std::string& section, const std::string& key) const {
    const auto it = seen_.find(section);
    return it != seen_.end() && it->second.count(key) > 0;
  }

 private:
  const toml::table& root_;
  std::map<std::string, std::set<std::string>> seen_{{"", {}}};
};

// A value as a reader writes it: shortest round-trip numbers ("370.8", not toml++'s 17 digits),
// quoted strings, lists in brackets.
std::string value_text(const toml::node& n) {
  if (const auto* d = n.as_floating_point()) return fmt::format("{}", d->get());
  if (const auto* i = n.as_integer()) return std::to_string(i->get());
  if (const auto* b = n.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* s = n.as_string()) return "\"" + s->get() + "\"";
  if (const auto* a = n.as_array()) {
    std::string out = "[";
    for (size_t k = 0; k < a->size(); ++k) out += (k ? ", " : "") + value_text(*a->get(k));
    return out + "]";
  }
  return "?";
}

// The sections whose every value needs a provenance entry, in the order the report prints them.
constexpr const char* kSourcedSections[] = {"hardware", "sweep",       "truth", "deviations",
                                            "noise",    "observation", "hipipe"};

// [provenance]: "SECTION.KEY" = { basis = "measured" | "derived" | "assumed", source = "..." } for
// every value the loader read from the sourced sections, and nothing else.
std::vector<FabricPreset::ValueSource> read_provenance(PresetReader& r, const toml::table& root) {
  const toml::table& pv = r.table("provenance");
  std::vector<FabricPreset::ValueSource> out;
  for (const char* section : kSourcedSections) {
    const toml::table* t = root[section].as_table();
    if (!t) continue;
    for (auto&& [k, v] : *t) {
      if (!r.was_read(section, std::string(k.str())))
        continue;  // an unknown key: reject_unknown_keys() names it
      const std::string key = std::string(section) + "." + std::string(k.str());
      const toml::node* entry = pv.get(key);
      if (!entry)
        r.fail(toml_line(v), "no [provenance] entry \"" + key + "\": say where this value comes from");
      r.mark("provenance", key);
      const toml::table* e = entry->as_table();
      if (!e) r.fail(toml_line(*entry), "[provenance] \"" + key + "\" must be { basis = ..., source = ... }");
      const auto text = [&](const char* field) {
        const toml::node* n = e->get(field);
        if (!n || !n->is_string() || n->as_string()->get().empty())
          r.fail(toml_line(*entry), "[provenance] \"" + key + "\" needs a non-empty string '" + field + "'");
        const std::string& s = n->as_string()->get();
        if (std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
          r.fail(toml_line(*n), "[provenance] \"" + key + "\": '" + field + "' holds a control character");
        return s;
      };
      for (auto&& [f, fv] : *e)
        if (f.str() != "basis" && f.str() != "source")
          r.fail(toml_line(fv), "[provenance] \"" + key + "\": unknown field " + quoted_value(f.str()));
      FabricPreset::ValueSource vs{key, value_text(v), text("basis"), text("source")};
      if (vs.basis != "measured" && vs.basis != "derived" && vs.basis != "assumed")
        r.fail(toml_line(*e->get("basis")), "[provenance] \"" + key + "\": basis '" + vs.basis +
                                                "' is none of measured, derived, assumed");
      out.push_back(std::move(vs));
    }
  }
  return out;
}

model::GpuArch parse_arch(PresetReader& r, const toml::table& t) {
  const std::string s = r.string(t, "hardware", "arch");
  if (s == "hopper") return model::GpuArch::kHopper;
  if (s == "blackwell") return model::GpuArch::kBlackwell;
  r.fail(toml_line(*t.get("arch")), "arch '" + s + "' is not one of: hopper, blackwell");
}

// The top-level 'name' (which must match the file name) and the optional 'description'.
void read_preset_name(PresetReader& r, const toml::table& root, const std::string& path, FabricPreset& f) {
  const toml::node* n = root.get("name");
  if (!n || !n->is_string()) r.fail(n ? toml_line(*n) : 0, "'name' must be a string");
  f.name = n->as_string()->get();
  r.mark_top("name");
  if (const toml::node* d = root.get("description")) {
    if (!d->is_string()) r.fail(toml_line(*d), "'description' must be a string");
    f.description = d->as_string()->get();
    r.mark_top("description");
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  if (f.name != stem)
    r.fail(toml_line(*root.get("name")), "name '" + f.name + "' does not match the file name");
}

// [hardware]: the GPUs, links and NICs of a host and what NCCL's tuner sees of them.
void read_preset_hardware(PresetReader& r, FabricPreset& f) {
  const toml::table& hw = r.table("hardware");
  f.arch = parse_arch(r, hw);
  f.gpus_per_host = r.integer(hw, "hardware", "gpus_per_host", 1, 64);
  f.nvlink_domain_gpus = r.integer(hw, "hardware", "nvlink_domain_gpus", 1, 576);
  if (f.nvlink_domain_gpus % f.gpus_per_host != 0 && f.nvlink_domain_gpus > f.gpus_per_host)
    r.fail(toml_line(*hw.get("nvlink_domain_gpus")),
           "nvlink_domain_gpus must be a multiple of gpus_per_host");
  f.nvlink_bw = float(r.number(hw, "hardware", "nvlink_bw", 1.0, 1e5));
  f.nic_bw = float(r.number(hw, "hardware", "nic_bw", 0.1, 1e4));
  f.nics_per_host = r.integer(hw, "hardware", "nics_per_host", 1, 64);
  f.ring_channels = r.integer(hw, "hardware", "ring_channels", 1, 64);
  f.nvls_channels = r.integer(hw, "hardware", "nvls_channels", 1, 64);
  f.collnet_channels = r.integer(hw, "hardware", "collnet_channels", 1, 64);
  f.nvls_support = r.boolean(hw, "hardware", "nvls_support");
  f.collnet_support = r.boolean(hw, "hardware", "collnet_support");
  f.nvswitch = r.boolean(hw, "hardware", "nvswitch");
  f.tree_pattern_balanced = r.boolean(hw, "hardware", "tree_pattern_balanced");
  f.ll128_path_ok = r.boolean(hw, "hardware", "ll128_path_ok");
  f.cpu_amd = r.boolean(hw, "hardware", "cpu_amd");
  f.host_net_device = r.boolean(hw, "hardware", "host_net_device");
  f.latency_inter_us = float(r.number(hw, "hardware", "latency_inter_us", 0.0, 1e4));
}

// [deviations]: where the simulated truth departs from NCCL's cost model.
void read_preset_deviations(PresetReader& r, FabricPreset& f) {
  const toml::table& dv = r.table("deviations");
  f.channel_cap_error = r.range(dv, "deviations", "channel_cap_error", 0.0, 0.5);
  f.latency_error = r.range(dv, "deviations", "latency_error", 0.0, 0.5);
  f.ll_bw_scale = r.range(dv, "deviations", "ll_bw_scale", 0.05, 5.0);
  f.ll128_bw_scale = r.range(dv, "deviations", "ll128_bw_scale", 0.05, 2.0);
  f.ll128_lat_scale = r.range(dv, "deviations", "ll128_lat_scale", 0.5, 5.0);
  f.tree_congestion = r.range(dv, "deviations", "tree_congestion", 0.0, 5.0);
  f.tree_congestion_from = r.integer(dv, "deviations", "tree_congestion_from", 2, 4096);
  f.nvls_tree_overhead_us = r.range(dv, "deviations", "nvls_tree_overhead_us", 0.0, 1e4);
  f.nvls_tree_overhead_from = r.integer(dv, "deviations", "nvls_tree_overhead_from", 2, 4096);
  f.nvls_tree_bw_loss = r.range(dv, "deviations", "nvls_tree_bw_loss", 0.0, 0.5);
  f.slow_path_proto = r.string(dv, "deviations", "slow_path_proto");
  if (f.slow_path_proto != "LL" && f.slow_path_proto != "LL128" && f.slow_path_proto != "Simple")
    r.fail(toml_line(*dv.get("slow_path_proto")), "slow_path_proto must be LL, LL128 or Simple");
  f.slow_path_slice_log2 = r.range(dv, "deviations", "slow_path_slice_log2", 0.0, 40.0);
  f.slow_path_width_log2 = r.number(dv, "deviations", "slow_path_width_log2", 0.0, 40.0);
  f.slow_path_bw_factor = r.range(dv, "deviations", "slow_path_bw_factor", 0.01, 1.0);
  f.slow_path_from_nodes = r.integer(dv, "deviations", "slow_path_from_nodes", 1, 4096);
}

// [noise]: the measurement noise of a sweep.
void read_preset_noise(PresetReader& r, FabricPreset& f) {
  const toml::table& nz = r.table("noise");
  f.sigma_large = r.number(nz, "noise", "sigma_large", 0.0, 1.0);
  f.sigma_small = r.number(nz, "noise", "sigma_small", 0.0, 1.0);
  f.small_bytes = r.number(nz, "noise", "small_bytes", 1.0, 1e15);
  f.outlier_prob = r.number(nz, "noise", "outlier_prob", 0.0, 0.5);
  f.outlier_scale = r.number(nz, "noise", "outlier_scale", 0.0, 100.0);
  f.outlier_alpha = r.number(nz, "noise", "outlier_alpha", 0.5, 10.0);
}

// [observation] (optional): the observation model and its call dynamics.
void read_preset_observation(PresetReader& r, FabricPreset& f) {
  const toml::table& ob = r.table("observation");
  ObservationModel& o = f.observation;
  o.enabled = r.boolean(ob, "observation", "enabled");
  o.cv_small = r.number(ob, "observation", "cv_small", 0.0, 2.0);
  o.cv_large = r.number(ob, "observation", "cv_large", 0.0, 2.0);
  o.cv_knee_bytes = r.number(ob, "observation", "cv_knee_bytes", 1.0, 1e15);
  o.spike_prob = r.number(ob, "observation", "spike_prob", 0.0, 0.5);
  o.spike_min = r.number(ob, "observation", "spike_min", 1.0, 1000.0);
  o.spike_alpha = r.number(ob, "observation", "spike_alpha", 0.5, 10.0);
  o.spike_cap = r.number(ob, "observation", "spike_cap", 1.0, 10000.0);
  if (o.spike_cap < o.spike_min)
    r.fail(toml_line(*ob.get("spike_cap")), "'spike_cap' must be >= 'spike_min'");
  CallDynamics& c = o.dynamics.call;
  c.job_warmup = float(r.number(ob, "observation", "job_warmup", 0.0, 100.0));
  c.job_warmup_calls = r.integer(ob, "observation", "job_warmup_calls", 0, 100000000);
  c.arm_warmup = float(r.number(ob, "observation", "arm_warmup", 0.0, 100.0));
  c.arm_warmup_calls = r.integer(ob, "observation", "arm_warmup_calls", 0, 100000000);
  c.shift_rate = float(r.number(ob, "observation", "shift_rate", 0.0, 0.5));
  c.shift_size = float(r.number(ob, "observation", "shift_size", 0.0, 0.9));
  c.shift_arm_size = float(r.number(ob, "observation", "shift_arm_size", 0.0, 0.9));
  o.dynamics.first_use_base_us = r.number(ob, "observation", "first_use_base_us", 0.0, 1e9);
  o.dynamics.first_use_per_host_us = r.number(ob, "observation", "first_use_per_host_us", 0.0, 1e9);
}

// [hipipe] (optional): the HiPIPE preset and its NIC bandwidth scale.
void read_preset_hipipe(PresetReader& r, FabricPreset& f) {
  const toml::table& hp = r.table("hipipe");
  f.hipipe_preset = r.string(hp, "hipipe", "preset");
  if (f.hipipe_preset.empty() || f.hipipe_preset.find('/') != std::string::npos)
    r.fail(toml_line(*hp.get("preset")), "'preset' must name a preset of data/hipipe");
  f.hipipe_nic_bw_scale = r.number(hp, "hipipe", "nic_bw_scale", 0.1, 10.0);
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("NCCLBOT_DATA_DIR"); env && *env) return env;
  return resource_paths().data;
}

std::vector<std::string> fabric_names() {
  std::vector<std::string> names;
  const fs::path dir = fs::path(data_dir()) / "fabrics";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

FabricPreset load_fabric(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
  if (plain && data_dir().empty())
    throw UsageError("fabric '" + name +
                     "': no fabric presets found (ncclbot looks in BIN/../share/ncclbot/fabrics beside "
                     "the program and in the source tree of its build folder); set NCCLBOT_DATA_DIR to a "
                     "folder holding fabrics/NAME.toml");
  const fs::path path = fs::path(data_dir()) / "fabrics" / (name + ".toml");
  if (!plain || !input_path_exists(path.string())) {
    std::string known;
    for (const auto& n : fabric_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("unknown fabric '" + name + "' (presets in " +
                     (fs::path(data_dir()) / "fabrics").string() + ": " +
                     (known.empty() ? "none found; set NCCLBOT_DATA_DIR" : known) + ")");
  }
  return load_fabric_file(path.string());
}

FabricPreset load_fabric_file(const std::string& path) {
  return parse_fabric(read_input_file(path, kMaxConfigBytes), path);
}

FabricPreset parse_fabric(const std::string& text, const std::string& path) {
  const toml::table root = TomlReader(path).parse(text);
  PresetReader r(path, root);
  FabricPreset f;
  f.file = path;
  read_preset_name(r, root, path, f);

  read_preset_hardware(r, f);

  const toml::table& sw = r.table("sweep");
  f.default_nodes = r.int_list(sw, "sweep", "nodes");

  const toml::table& tr = r.table("truth");
  f.ring_bw_scale_one_node = r.number(tr, "truth", "ring_bw_scale_one_node", 0.1, 10.0);
  f.ring_bw_scale_multi_node = r.number(tr, "truth", "ring_bw_scale_multi_node", 0.1, 10.0);
  f.nvls_bw_scale = r.number(tr, "truth", "nvls_bw_scale", 0.1, 10.0);
  f.nvls_tree_bw_scale = r.number(tr, "truth", "nvls_tree_bw_scale", 0.1, 10.0);
  f.launch_overhead_us = r.number(tr, "truth", "launch_overhead_us", 0.0, 1e4);

  read_preset_deviations(r, f);

  read_preset_noise(r, f);

  if (root.get("observation")) read_preset_observation(r, f);

  if (root.get("hipipe")) read_preset_hipipe(r, f);

  f.provenance = read_provenance(r, root);
  r.reject_unknown_keys();  // a [provenance] entry for no value is an unknown key there
  return f;
}

model::Topology topology_for(const FabricPreset& f, int hosts, int gpus_per_host) {
  if (hosts > kLargestHosts)
    throw UsageError("fabric " + f.name + ": " + std::to_string(hosts) +
                     " hosts: the simulator models at most " + std::to_string(kLargestHosts));
  if (hosts < 1 || gpus_per_host < 1 || gpus_per_host > f.gpus_per_host)
    throw UsageError("fabric " + f.name + ": " + std::to_string(hosts) + " x " +
                     std::to_string(gpus_per_host) + " GPUs does not fit hosts of " +
                     std::to_string(f.gpus_per_host) + " GPUs");
  model::Topology t;
  t.arch = f.arch;
  // Hosts in one NVLink domain (GB200: 18 trays of an NVL72 rack) form one NCCL node.
  const int hosts_per_domain =
      f.nvlink_domain_gpus > f.gpus_per_host ? f.nvlink_domain_gpus / f.gpus_per_host : 1;
  int domain_hosts = hosts;
  if (hosts > hosts_per_domain) {
    if (hosts % hosts_per_domain != 0)
      throw UsageError("fabric " + f.name + ": " + std::to_string(hosts) +
                       " hosts do not fill whole NVLink domains of " + std::to_string(hosts_per_domain) +
                       " hosts");
    domain_hosts = hosts_per_domain;
  }
  t.nodes = hosts / domain_hosts;
  t.gpus_per_node = domain_hosts * gpus_per_host;
  t.nvlink_bw = f.nvlink_bw;
  t.nic_bw = f.nic_bw;
  // Ranks use the NICs closest to them: a partial host uses its share of the host's NICs.
  t.nics_per_node = std::max(1, domain_hosts * f.nics_per_host * gpus_per_host / f.gpus_per_host);
  t.intra_nvlink = true;
  t.ring_channels = f.ring_channels;
  t.nvls_channels = f.nvls_channels;
  t.collnet_channels = f.collnet_channels;
  t.nvls_support = f.nvls_support;
  t.collnet_support = f.collnet_support;
  t.nvswitch = f.nvswitch;
  t.tree_pattern_balanced = f.tree_pattern_balanced;
  t.ll128_path_ok = f.ll128_path_ok;
  t.cpu_amd = f.cpu_amd;
  t.host_net_device = f.host_net_device;
  t.latency_inter_us = f.latency_inter_us;
  return t;
}

}  // namespace ncclbot::sim
