#include "plugin/decision_log_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "ncclbot/log/decision_log_format.hpp"

namespace ncclbot::plugin {
namespace {

constexpr size_t kBufferCap = size_t(1) << 20;
// Deferred propensities waiting for the writer thread (each holds a contest of up to 24 arms).
constexpr size_t kDeferredCap = 4096;
// How many names a log may take: PATH, then PATH.1 to PATH.9999.
constexpr int kMaxLogFiles = 10000;

bool write_all(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

}  // namespace

std::string DecisionLog::expand(const std::string& pattern, int rank) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r') {
      out += std::to_string(rank < 0 ? 0 : rank);
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::shared_ptr<DecisionLog> DecisionLog::open(const DecisionLogSettings& settings, int rank,
                                               std::string* error) {
  std::shared_ptr<DecisionLog> log(new DecisionLog());
  log->settings_ = settings;
  log->base_ = expand(settings.path_pattern, rank);
  log->buffer_.reserve(kBufferCap);
  if (!log->open_file(error)) return nullptr;
  log->writer_ = std::thread([raw = log.get()] { raw->run(); });
  return log;
}

// Creates this run's file (0600) and writes the header first: PATH when nothing is there, else the
// first free PATH.N (N = 1, 2, ...), and past the size cap the next free name. O_EXCL: the plugin
// never appends to a log it did not start, whose header (another run's policy, seed or process)
// would then sit over these records, and never opens an existing file at all, so a FIFO or a device
// at a later name cannot stall NCCL's communicator set-up. PATH itself must be a regular file or
// absent: anything else there (a FIFO, a device, a folder, a symlink) is refused, one warning and
// no log.
bool DecisionLog::open_file(std::string* error) {
  struct stat st {};
  if (::lstat(base_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    *error = base_ + " is not a regular file";
    return false;
  }
  for (int n = next_name_; n < kMaxLogFiles; ++n) {
    const std::string name = n == 0 ? base_ : base_ + "." + std::to_string(n);
    const int fd =
        ::open(name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      *error = "cannot create " + name + ": " + std::strerror(errno);
      return false;
    }
    std::vector<unsigned char> header(decision_log::kMaxHeaderBytes);
    const uint32_t bytes = decision_log::encode_header(settings_.header_text.data(),
                                                       settings_.header_text.size(), header.data());
    if (bytes == 0 || !write_all(fd, header.data(), bytes)) {
      ::close(fd);
      *error = "cannot write the header of " + name;
      return false;
    }
    path_ = name;
    next_name_ = n + 1;
    file_bytes_ = bytes;
    fd_ = fd;
    return true;
  }
  *error = "no free name: " + base_ + " and " + base_ + ".1 to " + base_ + "." +
           std::to_string(kMaxLogFiles - 1) + " all exist";
  return false;
}

DecisionLog::~DecisionLog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  flush();
  if (fd_ >= 0) ::close(fd_);
}

// Whether `bytes` more fit the buffer; a record that does not is lost (counted), never waited for.
// The writer is woken when the buffer passes half full (and append_deferred() wakes it when the
// queue of integrals does), so a burst of calls faster than one buffer per 50 ms is written as it
// comes instead of dropped; the wake-up happens once per half buffer (about 7,000 call records),
// not per call.
bool DecisionLog::room_locked(size_t bytes) {
  const size_t before = buffer_.size();
  if (before + bytes > kBufferCap) {
    ++dropped_;  // full (the disk is slower than the job)
    return false;
  }
  if (before < kBufferCap / 2 && before + bytes >= kBufferCap / 2) wake_.notify_one();
  return true;
}

void DecisionLog::append(const void* record, size_t bytes) {
  // The writer holds the lock only to swap the buffer out, never for its I/O.
  std::lock_guard<std::mutex> lock(mu_);
  if (!room_locked(bytes)) return;
  const auto* p = static_cast<const unsigned char*>(record);
  buffer_.insert(buffer_.end(), p, p + bytes);
}

void DecisionLog::append_deferred(const decision_log::CallRecord& record, const ThompsonContest& contest) {
  unsigned char out[decision_log::kCallRecordBytes];
  decision_log::encode(record, out);
  std::lock_guard<std::mutex> lock(mu_);
  if (deferred_.size() >= kDeferredCap) {
    ++dropped_;  // as many integrals waiting as the writer takes: lost, never waited for
    return;
  }
  if (!room_locked(sizeof out)) return;
  if (deferred_.capacity() == 0) deferred_.reserve(kDeferredCap);
  Deferred& d = deferred_.emplace_back();  // the contest's arms only, not its whole capacity
  d.offset = buffer_.size();
  d.contest.n = contest.n;
  d.contest.played = contest.played;
  std::memcpy(d.contest.mean, contest.mean, sizeof(double) * size_t(contest.n));
  std::memcpy(d.contest.spread, contest.spread, sizeof(double) * size_t(contest.n));
  buffer_.insert(buffer_.end(), out, out + sizeof out);
  if (deferred_.size() == kDeferredCap / 2) wake_.notify_one();  // once, as the queue reaches half
}

void DecisionLog::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  drain_locked(lock);
}

// Takes the buffer (the lock is released for the I/O) and writes it, rotating past the cap at a
// record boundary (the buffer holds whole records only).
void DecisionLog::drain_locked(std::unique_lock<std::mutex>& lock) {
  if (buffer_.empty()) return;
  std::vector<unsigned char> out;
  out.reserve(kBufferCap);
  out.swap(buffer_);
  std::vector<Deferred> deferred;
  if (!deferred_.empty()) {  // the allocation is the writer's, as the buffer's is
    deferred.reserve(kDeferredCap);
    deferred.swap(deferred_);
  }
  lock.unlock();
  {
    std::lock_guard<std::mutex> io(io_mu_);
    for (const Deferred& d : deferred) {  // the integrals, here and not on the caller's thread
      decision_log::CallRecord r = decision_log::decode_call(out.data() + d.offset);
      r.propensity = thompson_win_probability(d.contest);
      unsigned char sealed[decision_log::kCallRecordBytes];
      decision_log::encode(r, sealed);
      std::memcpy(out.data() + d.offset, sealed, sizeof sealed);
    }
    if (fd_ >= 0 && file_bytes_ + out.size() > settings_.max_bytes && file_bytes_ > 0) {
      ::close(fd_);
      fd_ = -1;
      std::string error;
      open_file(&error);  // the next free name; fd_ stays -1 when there is none (the writes count as failed)
    }
    if (fd_ >= 0 && write_all(fd_, out.data(), out.size())) {
      file_bytes_ += out.size();
      written_ += out.size();
    } else {
      ++failed_writes_;
    }
  }
  lock.lock();
}

void DecisionLog::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, settings_.period, [&] {
      return stop_ || buffer_.size() >= kBufferCap / 2 || deferred_.size() >= kDeferredCap / 2;
    });
    drain_locked(lock);
  }
}

int LoggedSizes::find_or_log(DecisionLog& log, uint64_t comm_hash, int collective, uint64_t bytes, int nnodes,
                             int nranks, const CostTable& table) {
  for (const auto& size : sizes_)
    if (size.first == bytes) {
      last_ = size;
      return size.second;
    }
  decision_log::ContextRecord r;
  r.comm_hash = comm_hash;
  r.bytes = bytes;
  r.nodes = uint32_t(nnodes);
  r.ranks = uint32_t(nranks);
  r.collective = collective;
  r.nccl_slot = table.nccl_pick_slot();
  float prior[kNumArms];
  table.prior(prior);
  for (int s = 0; s < kNumNcclArms; ++s) r.cost_us[s] = prior[s];
  unsigned char out[decision_log::kContextRecordBytes];
  decision_log::encode(r, out);
  log.append(out, sizeof out);
  sizes_.emplace_back(bytes, int8_t(r.nccl_slot));
  last_ = sizes_.back();
  return r.nccl_slot;
}

}  // namespace ncclbot::plugin
