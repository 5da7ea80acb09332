#include "plugin/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace ncclbot::plugin {
namespace {

constexpr char kMagic[8] = {'N', 'C', 'C', 'L', 'B', 'O', 'T', 'S'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kEntryFixed = 5 * 4 + 4 + 8 + kNumNcclArms * 4;  // five u32, padding, u64, prior
constexpr uint32_t kMaxEntries = 1u << 20;

template <typename T>
void put_raw(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T get_raw(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
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

void StateFile::put(StateEntry entry) {
  for (StateEntry& e : entries_)
    if (e.nranks == entry.nranks && e.nnodes == entry.nnodes && e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  entries_.push_back(std::move(entry));
}

bool StateFile::load(const std::string& path, std::string* warning) {
  entries_.clear();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return true;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *warning = path + ": cannot read (" + std::strerror(errno) + "), starting from the prior";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  auto reject = [&](const std::string& why) {
    entries_.clear();
    *warning = path + ": " + why + "; ignoring it and starting from the prior";
    return false;
  };
  if (bytes.size() < kHeaderSize + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return reject("not an ncclbot state file");
  const char* p = bytes.data() + 8;
  const uint32_t version = get_raw<uint32_t>(p);
  const uint32_t state_size = get_raw<uint32_t>(p + 4);
  const uint64_t fingerprint = get_raw<uint64_t>(p + 8);
  const uint32_t count = get_raw<uint32_t>(p + 16);
  if (version != kStateFileVersion)
    return reject("state file version " + std::to_string(version) + " is not " +
                  std::to_string(kStateFileVersion));
  const uint64_t checksum = get_raw<uint64_t>(bytes.data() + bytes.size() - 8);
  if (fnv1a64(bytes.data(), bytes.size() - 8) != checksum)
    return reject("checksum mismatch (corrupt or truncated)");
  if (state_size != state_size_ || fingerprint != fingerprint_)
    return reject("written for another policy or plugin build");
  const size_t entry_size = kEntryFixed + state_size_;
  if (count > kMaxEntries || bytes.size() != kHeaderSize + size_t(count) * entry_size + 8)
    return reject("entry count does not match the file size");
  p = bytes.data() + kHeaderSize;
  for (uint32_t i = 0; i < count; ++i, p += entry_size) {
    StateEntry e;
    e.nranks = get_raw<uint32_t>(p);
    e.nnodes = get_raw<uint32_t>(p + 4);
    e.key = get_raw<uint32_t>(p + 8);
    e.mask = get_raw<uint32_t>(p + 12);
    e.steps = get_raw<uint32_t>(p + 16);
    e.bytes = get_raw<uint64_t>(p + 24);
    std::memcpy(e.prior, p + 32, sizeof e.prior);
    e.policy.assign(p + kEntryFixed, p + entry_size);
    entries_.push_back(std::move(e));
  }
  return true;
}

bool StateFile::save(const std::string& path, std::string* warning) const {
  std::string out;
  out.append(kMagic, 8);
  put_raw<uint32_t>(out, kStateFileVersion);
  put_raw<uint32_t>(out, state_size_);
  put_raw<uint64_t>(out, fingerprint_);
  put_raw<uint32_t>(out, uint32_t(entries_.size()));
  put_raw<uint32_t>(out, 0);
  for (const StateEntry& e : entries_) {
    put_raw<uint32_t>(out, e.nranks);
    put_raw<uint32_t>(out, e.nnodes);
    put_raw<uint32_t>(out, e.key);
    put_raw<uint32_t>(out, e.mask);
    put_raw<uint32_t>(out, e.steps);
    put_raw<uint32_t>(out, 0);
    put_raw<uint64_t>(out, e.bytes);
    out.append(reinterpret_cast<const char*>(e.prior), sizeof e.prior);
    std::string policy(e.policy.begin(), e.policy.end());
    policy.resize(state_size_, '\0');
    out += policy;
  }
  put_raw<uint64_t>(out, fnv1a64(out.data(), out.size()));

  // Unique temporary name per process and thread, in the target's directory so rename is atomic.
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *warning = tmp + ": cannot create (" + std::strerror(errno) + ")";
    return false;
  }
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *warning = tmp + ": write failed (" + std::strerror(errno) + ")";
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    *warning = tmp + ": fsync/close failed (" + std::strerror(errno) + ")";
    ::unlink(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *warning = path + ": rename failed (" + std::strerror(errno) + ")";
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace ncclbot::plugin
