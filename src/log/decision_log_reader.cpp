#include "ncclbot/log/decision_log.hpp"

#include <fstream>
#include <sstream>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {

constexpr size_t kMaxLogBytes = size_t(64) << 30;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open the decision log");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || size_t(size) > kMaxLogBytes)
    throw InputError(path, 0, "not a readable decision log of at most 64 GiB");
  in.seekg(0);
  std::string bytes(size_t(size), '\0');
  in.read(bytes.data(), size);
  if (!in) throw InputError(path, 0, "cannot read the decision log");
  return bytes;
}

[[noreturn]] void fail_at(const std::string& path, size_t offset, const std::string& reason) {
  throw InputError(path, 0, "byte " + std::to_string(offset) + ": " + reason);
}

// What no plugin writes (the checksum holds, so a foreign or crafted file): "" when the fields are
// in range.
std::string shape_problem(int collective, int nccl_slot, uint32_t nodes, uint32_t ranks) {
  if (collective < 0 || collective >= kNumCollectives)
    return "collective " + std::to_string(collective) + " is no ncclFunc_t";
  if (nccl_slot < -1 || nccl_slot >= kNumNcclArms)
    return "NCCL's pick " + std::to_string(nccl_slot) + " is no arm";
  if (nodes < 1 || ranks < nodes || ranks > (1u << 24))
    return std::to_string(nodes) + " nodes and " + std::to_string(ranks) + " ranks is no communicator";
  return "";
}

std::string call_problem(const decision_log::CallRecord& r) {
  if (std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty()) return bad;
  if (r.slot < 0 || r.slot >= kNumNcclArms)
    return "the arm that ran, " + std::to_string(r.slot) + ", is no arm";
  return "";
}

DecisionLogFile read_one(const std::string& path, DecisionLogData& data) {
  using namespace decision_log;
  const std::string bytes = read_bytes(path);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  DecisionLogFile file;
  file.path = path;
  if (bytes.size() < 16 || std::memcmp(p, kMagic, 8) != 0)
    throw InputError(path, 0, "not an ncclbot decision log (no NCBTLOG header; a truncated file?)");
  const uint32_t version = detail::get<uint32_t>(p, 8);
  if (version != kDecisionLogVersion)
    throw InputError(path, 0,
                     "decision log version " + std::to_string(version) + ", this ncclbot reads version " +
                         std::to_string(kDecisionLogVersion));
  const uint32_t header_bytes = detail::get<uint32_t>(p, 12);
  if (header_bytes < 16 || header_bytes % 8 != 0 || header_bytes > kMaxHeaderBytes ||
      header_bytes > bytes.size())
    throw InputError(path, 0,
                     "the header is damaged or truncated (says " + std::to_string(header_bytes) + " bytes)");
  std::istringstream text(std::string(bytes.data() + 16, header_bytes - 16));
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '\0') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) fail_at(path, 16, "header line '" + line + "' is not key=value");
    file.header[line.substr(0, eq)] = line.substr(eq + 1);
  }
  size_t at = header_bytes;
  while (at < bytes.size()) {
    const size_t left = bytes.size() - at;
    if (left < 8) {
      file.dropped_tail_bytes = left;
      break;
    }
    const uint32_t kind = detail::get<uint32_t>(p + at, 0);
    const uint32_t size = detail::get<uint32_t>(p + at, 4);
    const uint32_t want = kind == kKindCall      ? kCallRecordBytes
                          : kind == kKindContext ? kContextRecordBytes
                                                 : 0;
    if (want == 0 || size != want)
      fail_at(path, at,
              "unknown record (kind " + std::to_string(kind) + ", " + std::to_string(size) + " bytes)");
    if (size > left) {
      file.dropped_tail_bytes = left;  // a killed job's last, partial record
      break;
    }
    if (!intact(p + at, size)) fail_at(path, at, "record checksum does not match (the file is damaged)");
    if (kind == kKindCall) {
      const CallRecord r = decode_call(p + at);
      if (const std::string bad = call_problem(r); !bad.empty()) fail_at(path, at, bad);
      data.calls.push_back(r);
      ++file.calls;
    } else {
      const ContextRecord r = decode_context(p + at);
      if (const std::string bad = shape_problem(r.collective, r.nccl_slot, r.nodes, r.ranks); !bad.empty())
        fail_at(path, at, bad);
      data.contexts.push_back(r);
      ++file.contexts;
    }
    at += size;
  }
  return file;
}

}  // namespace

DecisionLogData read_decision_logs(const std::vector<std::string>& paths) {
  DecisionLogData data;
  for (const std::string& path : paths) {
    DecisionLogFile file = read_one(path, data);
    const auto value = [&](const char* key) {
      const auto it = file.header.find(key);
      return it == file.header.end() ? std::string() : it->second;
    };
    if (value("policy").empty()) throw InputError(path, 0, "the header names no policy");
    if (data.files.empty()) {
      data.policy = value("policy");
      data.seed = value("seed");
    } else if (value("policy") != data.policy || value("seed") != data.seed) {
      throw InputError(path, 0,
                       "logged by policy '" + value("policy") + "' seed " + value("seed") + ", but " +
                           data.files.front().path + " by '" + data.policy + "' seed " + data.seed +
                           ": read logs of one behaviour policy together");
    }
    data.files.push_back(std::move(file));
  }
  return data;
}

}  // namespace ncclbot
