#include "ncclbot/scale/bootstrap_on_ranks.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "ncclbot/scale/bootstrap_range.hpp"

namespace ncclbot {
namespace {

// One interval's request as rank 0 broadcasts it: the options a piece depends on, then x.
struct RequestHeader {
  uint32_t statistic;
  uint32_t reserved = 0;
  double threshold;
  uint64_t resamples, seed, n;
};

std::string encode_request(std::span<const double> x, const BootstrapOptions& o) {
  const RequestHeader h{uint32_t(o.statistic), 0, o.threshold, o.resamples, o.seed, x.size()};
  std::string bytes(sizeof h + x.size_bytes(), '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, x.data(), x.size_bytes());
  return bytes;
}

std::vector<double> doubles_of(const std::string& bytes, size_t offset = 0) {
  std::vector<double> v((bytes.size() - offset) / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), bytes.data() + offset, v.size() * sizeof(double));
  return v;
}

}  // namespace

std::vector<double> BootstrapOnRanks::my_piece(std::span<const double> x,
                                               const BootstrapOptions& options) const {
  const uint64_t B = options.resamples, r = uint64_t(group_.rank()), n = uint64_t(group_.size());
  const uint64_t first = B * r / n, end = B * (r + 1) / n;  // B <= 1e8 (the library's limit): no overflow
  BootstrapOptions mine = options;
  mine.threads = threads_;
  return bootstrap_distribution_range(x, mine, first, end - first);
}

BootstrapResult BootstrapOnRanks::interval(std::span<const double> x, const BootstrapOptions& options) {
  if (!percentile_interval_computable_elsewhere(x, options)) return bootstrap_interval(x, options);
  std::string request = encode_request(x, options);
  group_.broadcast_from_root(request);
  const std::vector<double> piece = my_piece(x, options);
  const std::vector<std::string> pieces = group_.gather_to_root(
      std::string(reinterpret_cast<const char*>(piece.data()), piece.size() * sizeof(double)));
  std::vector<double> theta;
  theta.reserve(options.resamples);
  for (const std::string& p : pieces) {
    const std::vector<double> v = doubles_of(p);
    theta.insert(theta.end(), v.begin(), v.end());
  }
  if (theta.size() != options.resamples)
    throw std::runtime_error("bootstrap over ranks: " + std::to_string(theta.size()) +
                             " resamples came back, " + std::to_string(options.resamples) + " expected");
  ++split_;
  return percentile_interval_from_distribution(x, std::move(theta), options);
}

void BootstrapOnRanks::finish() {
  std::string done;  // an empty request
  group_.broadcast_from_root(done);
}

void BootstrapOnRanks::serve() {
  for (;;) {
    std::string request;
    group_.broadcast_from_root(request);
    if (request.empty()) return;
    RequestHeader h;
    if (request.size() < sizeof h) throw std::runtime_error("bootstrap over ranks: truncated request");
    std::memcpy(&h, request.data(), sizeof h);
    const std::vector<double> x = doubles_of(request, sizeof h);
    if (x.size() != h.n) throw std::runtime_error("bootstrap over ranks: request of the wrong size");
    BootstrapOptions o;
    o.statistic = BootstrapStatistic(h.statistic);
    o.threshold = h.threshold;
    o.resamples = h.resamples;
    o.seed = h.seed;
    const std::vector<double> piece = my_piece(x, o);
    group_.gather_to_root(
        std::string(reinterpret_cast<const char*>(piece.data()), piece.size() * sizeof(double)));
  }
}

}  // namespace ncclbot
