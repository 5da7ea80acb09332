#include "plugin/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/byte_codec.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/regular_file.hpp"

namespace ncclbot::plugin {
namespace {

constexpr char kMagic[8] = {'N', 'C', 'C', 'L', 'B', 'O', 'T', 'S'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kEntryFixedBytes = 4 * 4 + 8 + 8 + 4 * kNumNcclArms + 4 + 4;

// A bounds-checked little-endian reader: every get fails (and stays failed) past the end.
class Reader {
 public:
  Reader(const std::string& bytes, size_t end)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(end) {}
  bool ok() const { return ok_; }
  size_t at() const { return at_; }
  template <typename T>
  T get() {
    if (!ok_ || end_ - at_ < sizeof(T)) {
      ok_ = false;
      return T(0);
    }
    const T v = load_le<T>(p_ + at_);
    at_ += sizeof(T);
    return v;
  }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  float f32() { return get<float>(); }

 private:
  const uint8_t* p_;
  size_t end_, at_ = 0;
  bool ok_ = true;
};

// visit_state() visitors: f(values, n, lo, hi). Doubles travel as IEEE bits, integers as int64;
// every value must be finite and within [lo, hi] both ways.
template <typename T>
bool value_fits(T v, double lo, double hi) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(v) && double(v) >= lo && double(v) <= hi;
  else
    return double(v) >= lo && double(v) <= hi;
}

struct ValueWriter {
  std::string* out;
  uint32_t count = 0;
  bool ok = true;
  template <typename T>
  void operator()(T* values, int n, double lo, double hi) {
    for (int i = 0; i < n; ++i) {
      ok = ok && value_fits(values[i], lo, hi);
      if constexpr (std::is_floating_point_v<T>)
        append_le<double>(*out, double(values[i]));
      else
        append_le<uint64_t>(*out, uint64_t(int64_t(values[i])));
      ++count;
    }
  }
};

struct ValueReader {
  Reader* in;
  uint32_t left;
  bool ok = true;
  template <typename T>
  void operator()(T* values, int n, double lo, double hi) {
    if (n < 0) ok = false;
    for (int i = 0; ok && i < n; ++i) {
      if (left == 0) {
        ok = false;
        return;
      }
      --left;
      if constexpr (std::is_floating_point_v<T>) {
        const double d = in->get<double>();
        ok = value_fits(d, lo, hi);
        if (ok) values[i] = T(d);
      } else {
        const int64_t v = int64_t(in->u64());
        using L = std::numeric_limits<T>;
        const bool fits = std::is_unsigned_v<T> ? v >= 0 && uint64_t(v) <= uint64_t(L::max())
                                                : v >= int64_t(L::min()) && v <= int64_t(L::max());
        ok = fits && double(v) >= lo && double(v) <= hi;
        if (ok) values[i] = T(v);
      }
    }
  }
};

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string errno_text() {
  return std::strerror(errno);
}

// Reads up to `size` bytes from `fd` (fewer if the file shrank) and closes it.
std::string read_and_close(int fd, size_t size) {
  std::string bytes(size, '\0');
  size_t have = 0;
  while (have < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += size_t(n);
  }
  ::close(fd);
  bytes.resize(have);
  return bytes;
}

// Writes `out` to a new temporary file beside `base` in the directory `dfd`, fsyncs it and renames
// it over `base`. false + `why` when a step fails (the temporary file, if made, is removed). Called
// by StateFile::save with the directory's flock held.
bool replace_file_atomically(int dfd, const std::string& base, const std::string& out, std::string* why) {
  uint64_t salt = 0;
  if (::getrandom(&salt, sizeof salt, 0) != ssize_t(sizeof salt))
    salt = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(::getpid());
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", (unsigned long long)salt);
  const std::string tmp = base + suffix;
  const int fd = ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "cannot create a temporary file beside it (" + errno_text() + ")";
    return false;
  }
  size_t done = 0;
  bool ok = true;
  while (ok && done < out.size()) {
    const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += size_t(n);
  }
  if (!ok) *why = "write failed (" + errno_text() + ")";
  if (ok && ::fsync(fd) != 0) ok = false, *why = "fsync failed (" + errno_text() + ")";
  if (::close(fd) != 0 && ok) ok = false, *why = "close failed (" + errno_text() + ")";
  if (ok && ::renameat(dfd, tmp.c_str(), dfd, base.c_str()) != 0)
    ok = false, *why = "rename failed (" + errno_text() + ")";
  if (!ok) ::unlinkat(dfd, tmp.c_str(), 0);
  return ok;
}

}  // namespace

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

bool has_state_magic(const std::string& bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kMagic, 8) == 0;
}

void StateFile::put(StateEntry entry) {
  for (StateEntry& e : entries_)
    if (e.nranks == entry.nranks && e.nnodes == entry.nnodes && e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  entries_.push_back(std::move(entry));
}

std::string StateFile::encode() const {
  std::string out(kMagic, 8);
  append_le<uint32_t>(out, kStateFileVersion);
  append_le<uint32_t>(out, 0);
  append_le<uint64_t>(out, engine_.fingerprint());
  append_le<uint32_t>(out, uint32_t(engine_.kind()));
  const size_t count_at = out.size();
  append_le<uint32_t>(out, 0);
  uint32_t written = 0;
  for (const StateEntry& e : entries_) {
    std::string entry;
    append_le<uint32_t>(entry, e.nranks);
    append_le<uint32_t>(entry, e.nnodes);
    append_le<uint32_t>(entry, e.key);
    append_le<uint32_t>(entry, e.mask);
    append_le<uint64_t>(entry, e.steps);
    append_le<uint64_t>(entry, e.bytes);
    for (float f : e.prior) append_le<float>(entry, f);
    std::string values;
    ValueWriter writer{&values};
    PolicyState copy = e.policy;
    with_policy(copy, [&](auto& p) { p.visit_state(writer); });
    if (!writer.ok || writer.count > kMaxStateValues) continue;  // a state that would not load again
    append_le<uint32_t>(entry, writer.count);
    append_le<uint32_t>(entry, 0);
    out += entry;
    out += values;
    ++written;
  }
  for (int i = 0; i < 4; ++i) out[count_at + size_t(i)] = char(uint8_t(written >> (8 * i)));
  append_le<uint64_t>(out, fnv1a64(out.data(), out.size()));
  return out;
}

bool StateFile::decode(const std::string& bytes, std::string* why) {
  entries_.clear();
  auto fail = [&](const std::string& reason) {
    entries_.clear();
    *why = reason;
    return false;
  };
  if (!has_state_magic(bytes)) return fail("not an ncclbot state file");
  if (bytes.size() < kHeaderBytes + 8) return fail("truncated");
  const uint64_t checksum = load_le<uint64_t>(bytes.data() + bytes.size() - 8);
  Reader in(bytes, bytes.size() - 8);
  in.u64();  // the magic, checked above (has_state_magic)
  const uint32_t version = in.u32();
  if (version != kStateFileVersion)
    return fail("state file version " + std::to_string(version) + " is not " +
                std::to_string(kStateFileVersion));
  if (fnv1a64(bytes.data(), bytes.size() - 8) != checksum)
    return fail("checksum mismatch (corrupt or truncated)");
  const uint32_t reserved = in.u32();
  const uint64_t fingerprint = in.u64();
  const uint32_t kind = in.u32();
  const uint32_t count = in.u32();
  if (reserved != 0) return fail("bad header");
  if (fingerprint != engine_.fingerprint() || kind != uint32_t(engine_.kind()))
    return fail("written for another policy (" + engine_.spec() + " here)");
  if (count > kMaxStateEntries || count > (bytes.size() - kHeaderBytes) / kEntryFixedBytes)
    return fail("entry count " + std::to_string(count) + " does not fit the file");
  entries_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const std::string where = "entry " + std::to_string(i) + ": ";
    StateEntry e;
    e.nranks = in.u32();
    e.nnodes = in.u32();
    e.key = in.u32();
    e.mask = in.u32();
    e.steps = in.u64();
    e.bytes = in.u64();
    for (float& f : e.prior) f = in.f32();
    const uint32_t values = in.u32();
    const uint32_t zero = in.u32();
    if (!in.ok()) return fail(where + "truncated");
    if (e.nranks < 1 || e.nranks >= (1u << 30) || e.nnodes < 1 || e.nnodes > e.nranks)
      return fail(where + "bad rank or node count");
    if (e.key >= uint32_t(kNumContextKeys) || zero != 0) return fail(where + "bad context key");
    if (ArmMask{e.mask} != ArmMask{e.mask}.nccl_arms() || !(ArmMask{e.mask} == usable_prior_arms(e.prior)))
      return fail(where + "arm mask does not match the prior");
    if (values > kMaxStateValues) return fail(where + "too many values");
    engine_.reset(e.policy, ArmMask{e.mask}, e.prior);
    ValueReader reader{&in, values};
    with_policy(e.policy, [&](auto& p) { p.visit_state(reader); });
    if (!reader.ok || !in.ok()) return fail(where + "a policy value is out of range or missing");
    if (reader.left != 0) return fail(where + "more values than the policy has");
    put(std::move(e));
  }
  if (in.at() != bytes.size() - 8) return fail("trailing bytes after the entries");
  return true;
}

bool StateFile::load(const std::string& path, std::string* warning) {
  entries_.clear();
  ReadRules rules;
  rules.max_bytes = kMaxStateFileBytes;
  rules.no_follow = true;
  std::string bytes, why;
  const ReadResult r = read_regular_file(path, rules, &bytes, &why);
  if (r == ReadResult::kMissing) return true;
  if (r == ReadResult::kRefused) {
    *warning = "NCCLBOT_STATE=" + why + "; not used";
    return false;
  }
  if (!decode(bytes, &why)) {
    *warning = "NCCLBOT_STATE=" + path + ": " + why + "; ignoring it and starting from the prior";
    return false;
  }
  return true;
}

bool StateFile::save(const std::string& path, std::string* warning) const {
  const std::string dir = dir_of(path), base = base_of(path);
  if (base.empty() || base == "." || base == "..") {
    *warning = "NCCLBOT_STATE=" + path + ": not a file name";
    return false;
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    *warning = "NCCLBOT_STATE=" + path + ": cannot open its directory (" + errno_text() + ")";
    return false;
  }
  auto give_up = [&](const std::string& why) {
    *warning = "NCCLBOT_STATE=" + path + ": " + why;
    ::close(dfd);  // also releases the lock
    return false;
  };
  // Concurrent jobs take turns (and merge); a lock held for seconds is not worth stalling NCCL's
  // finalize for.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::flock(dfd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return give_up("cannot lock its directory (" + errno_text() + ")");
    if (std::chrono::steady_clock::now() >= deadline)
      return give_up("its directory stayed locked; not saved");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  StateFile merged(engine_);
  struct stat st;
  if (::fstatat(dfd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) return give_up("not a regular file; left alone, not saved");
    if (uint64_t(st.st_size) > kMaxStateFileBytes)
      return give_up("larger than an ncclbot state file; left alone");
    const int fd = ::openat(dfd, base.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return give_up("cannot read (" + errno_text() + "); not saved");
    std::string bytes = read_and_close(fd, size_t(st.st_size));
    if (!has_state_magic(bytes)) return give_up("not written by ncclbot; left alone, not saved");
    std::string why;
    if (!merged.decode(bytes, &why)) merged.entries_.clear();  // ncclbot's but unusable: replaced
  } else if (errno != ENOENT) {
    return give_up("cannot stat (" + errno_text() + "); not saved");
  }
  for (const StateEntry& e : entries_) merged.put(e);
  const std::string out = merged.encode();

  std::string why;
  if (!replace_file_atomically(dfd, base, out, &why)) return give_up(why);
  ::fsync(dfd);  // the rename itself survives a crash
  ::close(dfd);
  return true;
}

}  // namespace ncclbot::plugin
