#include "ncclbot/core/parallel_for.hpp"

#include <algorithm>

namespace ncclbot {

// The thread pool with one item per worker, each a contiguous chunk.
void parallel_for_chunks(uint64_t count, unsigned threads,
                         const std::function<void(uint64_t, uint64_t)>& body) {
  const uint64_t wanted = threads == 0 ? uint64_t(default_thread_count()) : uint64_t(threads);
  const uint64_t workers = std::min<uint64_t>(wanted, std::max<uint64_t>(count, 1));
  if (workers <= 1) {
    body(0, count);
    return;
  }
  parallel_for(size_t(workers), int(workers),
               [&](size_t w) { body(count * w / workers, count * (w + 1) / workers); });
}

}  // namespace ncclbot
