#include "ncclbot/stats/parallel_for.hpp"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace ncclbot {

void parallel_for_chunks(uint64_t count, unsigned threads,
                         const std::function<void(uint64_t, uint64_t)>& body) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t workers = std::min<uint64_t>(threads, std::max<uint64_t>(count, 1));
  if (workers <= 1) {
    body(0, count);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(workers);
  for (uint64_t w = 0; w < workers; ++w) {
    const uint64_t begin = count * w / workers, end = count * (w + 1) / workers;
    pool.emplace_back([&, w, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ncclbot
