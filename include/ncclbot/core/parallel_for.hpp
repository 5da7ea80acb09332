#pragma once
// The one thread pool: `threads` workers take item indices from a shared counter. Each item writes
// only its own output slot (or adds up integer counts), so results never depend on which thread ran
// what. The first exception thrown by an item is rethrown on the caller's thread. Workers write to
// the caller's command streams (core/command_streams.hpp).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ncclbot/core/command_streams.hpp"

namespace ncclbot {

inline int default_thread_count() {
  return std::max(1, int(std::thread::hardware_concurrency()));
}

template <typename F>
void parallel_for(size_t n, int threads, F&& item) {
  threads = std::max(1, std::min<int>(threads, int(std::min<size_t>(n, 1u << 16))));
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const CommandStreams::Current streams = CommandStreams::current();  // the caller's, for every worker
  auto worker = [&] {
    const CommandStreams same(streams);
    try {
      for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) item(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n;
    }
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);
}

// [0, count) split into contiguous chunks, one per worker: body(begin, end) handles one chunk.
// threads == 0 means std::thread::hardware_concurrency().
void parallel_for_chunks(uint64_t count, unsigned threads,
                         const std::function<void(uint64_t, uint64_t)>& body);

}  // namespace ncclbot
