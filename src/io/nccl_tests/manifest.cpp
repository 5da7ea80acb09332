#include "ncclbot/io/nccl_tests/manifest.hpp"

#include <toml++/toml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot::nccl_tests {
namespace {

namespace fs = std::filesystem;

std::string read_string(const toml::node& n, const std::string& path, const std::string& key) {
  return TomlReader(path).string(n, key);
}

int read_count(const toml::node& n, const std::string& path, const std::string& key) {
  if (auto v = n.value_exact<int64_t>(); v && *v >= 1 && *v <= 1'000'000) return int(*v);
  TomlReader(path).fail(n, key + " must be an integer from 1 to 1000000");
}

ManifestEntry read_entry(const toml::table& t, const std::string& path, const fs::path& dir) {
  ManifestEntry e;
  e.line = toml_line(t);
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    if (k == "file") {
      e.file_line = toml_line(node);
      e.file = read_string(node, path, k);
      if (e.file.empty()) throw InputError(path, toml_line(node), "file must not be empty");
    } else if (k == "algo") {
      const std::string s = read_string(node, path, k);
      e.algo = parse_nccl_algo(s);  // an nccl-tests run forces one of NCCL's algorithms, never HiPIPE
      if (!e.algo)
        throw InputError(path, toml_line(node),
                         "algo " + quoted_value(s) + " is not one of " + std::string(nccl_algo_names_list()));
    } else if (k == "proto") {
      const std::string s = read_string(node, path, k);
      e.proto = parse_proto(s);
      if (!e.proto)
        throw InputError(path, toml_line(node),
                         "proto " + quoted_value(s) + " is not one of " + std::string(proto_names_list()));
    } else if (k == "collective") {
      const std::string s = read_string(node, path, k);
      e.collective = parse_collective(s);
      if (!e.collective)
        throw InputError(
            path, toml_line(node),
            "collective " + quoted_value(s) + " is not one of " + std::string(collective_names_list()));
    } else if (k == "nodes") {
      e.nodes = read_count(node, path, k);
    } else if (k == "gpus_per_node") {
      e.gpus_per_node = read_count(node, path, k);
    } else if (k == "fabric") {
      e.fabric = read_string(node, path, k);
      if (!valid_fabric_name(*e.fabric))
        throw InputError(path, toml_line(node),
                         "fabric " + quoted_value(*e.fabric) +
                             " must be 1-64 characters of letters, digits, '-', '_' or '.'");
    } else if (k == "channels") {
      e.channels_line = toml_line(node);
      e.channels = int(TomlReader(path).integer(node, k, 0, kMaxChannels));
    } else if (k == "chunk_bytes") {
      e.chunk_line = toml_line(node);
      e.chunk_bytes = uint32_t(TomlReader(path).integer(node, k, 0, int64_t(kMaxChunkBytes)));
    } else if (k == "id" || k == "log" || k == "min_bytes") {
      // campaign.toml's own keys (read by campaign/campaign.hpp); nothing ingest needs.
    } else {
      throw InputError(path, toml_line(node),
                       "unknown key " + quoted_value(k) +
                           " (known: file, algo, proto, collective, nodes, gpus_per_node, fabric, channels, "
                           "chunk_bytes; a campaign also id, log, min_bytes)");
    }
  }
  if (e.file.empty()) throw InputError(path, e.line, "[[run]] without a file");
  e.resolved = (dir / e.file).lexically_normal().string();
  return e;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

}  // namespace

bool valid_fabric_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) return false;
  return true;
}

Manifest parse_manifest(std::string_view text, const std::string& path) {
  const toml::table root = TomlReader(path).parse(text);
  Manifest m;
  m.path = path;
  const fs::path dir = fs::path(path).parent_path();
  for (auto&& [key, node] : root) {
    if (key.str() == "campaign" && node.is_table()) continue;  // a campaign's settings (campaign.toml)
    if (key.str() != "run")
      throw InputError(path, toml_line(node),
                       "unknown top-level key " + quoted_value(key.str()) + " (expected [[run]] tables)");
    const toml::array* runs = node.as_array();
    if (!runs) throw InputError(path, toml_line(node), "'run' must be a list of tables: write [[run]]");
    for (const toml::node& r : *runs) {
      const toml::table* t = r.as_table();
      if (!t) throw InputError(path, toml_line(r), "each run must be a table");
      m.entries.push_back(read_entry(*t, path, dir));
    }
  }
  if (m.entries.empty()) throw InputError(path, 0, "no [[run]] entries");
  for (size_t i = 0; i < m.entries.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (m.entries[i].resolved == m.entries[j].resolved)
        throw InputError(path, m.entries[i].line,
                         "second entry for " + m.entries[i].file + " (first at line " +
                             std::to_string(m.entries[j].line) + ")");
  return m;
}

Manifest read_manifest(const std::string& path) {
  return parse_manifest(read_log_bytes(path), path);  // the same size cap and NUL check as a log
}

const ManifestEntry* Manifest::find(const std::string& log_path) const {
  const ManifestEntry* found = nullptr;
  const std::string base = fs::path(log_path).filename().string();
  for (const ManifestEntry& e : entries) {
    const bool bare = e.file.find('/') == std::string::npos;
    const bool match =
        input_path_exists(e.resolved) ? same_file(e.resolved, log_path) : bare && e.file == base;
    if (!match) continue;
    if (found)
      throw InputError(path, e.line,
                       "entries at lines " + std::to_string(found->line) + " and " + std::to_string(e.line) +
                           " both match " + log_path);
    found = &e;
  }
  return found;
}

}  // namespace ncclbot::nccl_tests
