#include "plugin/plugin_config.hpp"

#include <cerrno>
#include <cstdlib>

#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

void note(PluginConfig& c, const std::string& what) {
  if (!c.problems.empty()) c.problems += "; ";
  c.problems += what;
}

}  // namespace

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kTable:
      return "table";
    case Mode::kOnline:
      return "online";
    default:
      return "off";
  }
}

int PluginConfig::single_arm_left() const {
  auto one_name = [](const std::string& v) {
    return !v.empty() && v.find_first_of(",;:^ \t") == std::string::npos;
  };
  if (!one_name(nccl_algo) || !one_name(nccl_proto)) return -1;
  const int algo = parse_algo_name(nccl_algo), proto = parse_proto_name(nccl_proto);
  return algo < 0 || proto < 0 ? -1 : algo * 3 + proto;
}

PluginConfig PluginConfig::from_environment() {
  PluginConfig c;
  c.table_path = env("NCCLBOT_TABLE");
  c.fabric = env("NCCLBOT_FABRIC");
  c.policy_spec = env("NCCLBOT_POLICY");
  c.knobs = env("NCCLBOT_KNOBS");
  c.state_path = env("NCCLBOT_STATE");
  c.leader_address = env("NCCLBOT_LEADER");
  c.leader_secret = env("NCCLBOT_LEADER_SECRET");
  c.leader_secret_file = env("NCCLBOT_LEADER_SECRET_FILE");
  c.nccl_algo = env("NCCL_ALGO");
  c.nccl_proto = env("NCCL_PROTO");
  const std::string mode = env("NCCLBOT_MODE");
  if (mode == "table")
    c.mode = Mode::kTable;
  else if (mode == "online")
    c.mode = Mode::kOnline;
  else if (mode == "off")
    c.mode = Mode::kOff;
  else if (mode.empty())
    c.mode = c.table_path.empty() ? Mode::kOff : Mode::kTable;
  else
    note(c, "NCCLBOT_MODE='" + mode + "' is not table|online|off, using off");

  const std::string seed = env("NCCLBOT_SEED");
  if (!seed.empty() && !parse_u64(seed, &c.seed))
    note(c, "NCCLBOT_SEED='" + seed + "' is not an unsigned integer, using 0");

  for (const char* name : {"NCCLBOT_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const std::string v = env(name);
    uint64_t r = 0;
    if (!v.empty() && parse_u64(v, &r) && r < 0x7fffffff) {
      c.rank = int(r);
      break;
    }
  }
  const std::string timeout = env("NCCLBOT_LEADER_TIMEOUT_MS");
  uint64_t t = 0;
  if (!timeout.empty()) {
    if (parse_u64(timeout, &t) && t <= 3600000)
      c.leader_timeout_ms = int(t);
    else
      note(c, "NCCLBOT_LEADER_TIMEOUT_MS='" + timeout + "' is not a number of milliseconds");
  }
  c.log_path = env("NCCLBOT_LOG");
  const std::string log_ranks = env("NCCLBOT_LOG_RANKS");
  uint64_t lr = 0;
  if (log_ranks == "all")
    c.log_rank = -1;
  else if (!log_ranks.empty() && parse_u64(log_ranks, &lr) && lr < 0x7fffffff)
    c.log_rank = int(lr);
  else if (!log_ranks.empty())
    note(c, "NCCLBOT_LOG_RANKS='" + log_ranks + "' is not a rank or 'all', using 0");
  const std::string log_mb = env("NCCLBOT_LOG_MAX_MB");
  uint64_t mb = 0;
  if (!log_mb.empty()) {
    if (parse_u64(log_mb, &mb) && mb >= 1 && mb <= (uint64_t(1) << 30))
      c.log_max_bytes = mb << 20;
    else
      note(c, "NCCLBOT_LOG_MAX_MB='" + log_mb + "' is not a size in MiB, using 1024");
  }
  const std::string agreement = env("NCCLBOT_AGREEMENT");
  if (agreement == "local")
    c.agreement = Agreement::kLocal;
  else if (!agreement.empty() && agreement != "leader")
    note(c, "NCCLBOT_AGREEMENT='" + agreement + "' is not leader|local");
  return c;
}

}  // namespace ncclbot::plugin
