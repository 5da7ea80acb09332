// The bootstrap-over-ranks protocol with the ranks as threads of one process (a process group
// whose broadcast and gather go through shared memory), so it runs in every build, sanitizers
// included: rank 0's intervals equal bootstrap_interval()'s bit for bit for any rank count, and
// what cannot be split (BCa, rejected input) runs on rank 0 as the library does.
#include "ncclbot/scale/bootstrap_on_ranks.hpp"
#include "support/same_bits.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace ncclbot;

namespace {

// What the ranks share: every broadcast and every gather in the order they happen (each rank
// takes part in the same collectives in the same order, as MPI requires).
struct Hub {
  explicit Hub(int n) : size(n) {}
  int size;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> broadcasts;
  std::map<long, std::vector<std::string>> gathers;
  std::map<long, int> arrived;
};

class ThreadGroup final : public ProcessGroup {
 public:
  ThreadGroup(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_.size; }
  int local_rank() const override { return rank_; }
  int local_size() const override { return hub_.size; }
  std::vector<std::string> gather_to_root(const std::string& bytes) override {
    std::unique_lock lock(hub_.mutex);
    const long k = gathers_++;
    auto& slots = hub_.gathers[k];
    slots.resize(size_t(hub_.size));
    slots[size_t(rank_)] = bytes;
    ++hub_.arrived[k];
    hub_.changed.notify_all();
    if (rank_ != 0) return {};
    hub_.changed.wait(lock, [&] { return hub_.arrived[k] == hub_.size; });
    return slots;
  }
  void broadcast_from_root(std::string& bytes) override {
    std::unique_lock lock(hub_.mutex);
    const size_t k = broadcasts_++;
    if (rank_ == 0) {
      hub_.broadcasts.push_back(bytes);
      hub_.changed.notify_all();
      return;
    }
    hub_.changed.wait(lock, [&] { return hub_.broadcasts.size() > k; });
    bytes = hub_.broadcasts[k];
  }
  void set_rank_timeout(double) override {}
  [[noreturn]] void abort(int, const std::string& message) override { throw std::runtime_error(message); }

 private:
  Hub& hub_;
  int rank_;
  long gathers_ = 0;
  size_t broadcasts_ = 0;
};

std::vector<double> losses() {
  std::vector<double> x;
  for (int i = 0; i < 211; ++i) x.push_back(double((i * 53) % 31) * double((i * 53) % 31) / 500.0);
  return x;
}

using ncclbot::test::same_bits;

// Runs `ranks` threads; rank 0 computes one interval per option set, the others serve.
std::vector<BootstrapResult> over_ranks(int ranks, const std::vector<double>& x,
                                        const std::vector<BootstrapOptions>& options, long* split) {
  Hub hub(ranks);
  std::vector<ThreadGroup> groups;
  for (int r = 0; r < ranks; ++r) groups.emplace_back(hub, r);
  std::vector<std::thread> servers;
  for (int r = 1; r < ranks; ++r)
    servers.emplace_back([&, r] { BootstrapOnRanks(groups[size_t(r)], 1).serve(); });
  BootstrapOnRanks root(groups[0], 2);
  std::vector<BootstrapResult> out;
  for (const BootstrapOptions& o : options) out.push_back(root.interval(x, o));
  root.finish();
  for (auto& t : servers) t.join();
  *split = root.split_intervals();
  return out;
}

}  // namespace

TEST(BootstrapOnRanks, AnyRankCountGivesTheLibraryInterval) {
  const std::vector<double> x = losses();
  std::vector<BootstrapOptions> options;
  for (BootstrapStatistic st : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max,
                                BootstrapStatistic::count_above}) {
    BootstrapOptions o;
    o.statistic = st;
    o.method = IntervalMethod::percentile;
    o.resamples = 999;
    o.level = 0.9;
    o.seed = 77 + uint64_t(st);
    options.push_back(o);
  }
  BootstrapOptions bca = options[0];
  bca.method = IntervalMethod::bca;  // not split: rank 0 runs the library
  options.push_back(bca);
  for (int ranks : {1, 2, 3, 5}) {
    long split = 0;
    const std::vector<BootstrapResult> got = over_ranks(ranks, x, options, &split);
    EXPECT_EQ(split, 4) << ranks << " ranks";
    for (size_t i = 0; i < options.size(); ++i) {
      const BootstrapResult want = bootstrap_interval(x, options[i]);
      EXPECT_TRUE(same_bits(got[i].estimate, want.estimate)) << ranks << " ranks, interval " << i;
      EXPECT_TRUE(same_bits(got[i].low, want.low)) << ranks << " ranks, interval " << i;
      EXPECT_TRUE(same_bits(got[i].high, want.high)) << ranks << " ranks, interval " << i;
    }
  }
}

TEST(BootstrapOnRanks, RejectedInputRaisesTheLibraryErrorOnRankZero) {
  const std::vector<double> bad = {0.1, std::numeric_limits<double>::infinity()};
  BootstrapOptions o;
  o.method = IntervalMethod::percentile;
  long split = 0;
  EXPECT_THROW(over_ranks(1, bad, {o}, &split), std::invalid_argument);
  o.resamples = 0;
  EXPECT_THROW(over_ranks(1, losses(), {o}, &split), std::invalid_argument);
}
