#pragma once
// Splits [0, count) into contiguous chunks over `threads` workers of the one thread pool
// (replay/parallel_for.hpp). Callers write each result
// into its own slot (or add up integer counts), so the answer never depends on the thread count.
#include <cstdint>
#include <functional>

namespace ncclbot {

// threads == 0 means std::thread::hardware_concurrency(). body(begin, end) handles one chunk.
void parallel_for_chunks(uint64_t count, unsigned threads,
                         const std::function<void(uint64_t, uint64_t)>& body);

}  // namespace ncclbot
