#pragma once
// Counts the heap allocations this thread makes while counting is on, whoever makes them: the
// benchmark defines malloc, calloc, realloc and the aligned allocators (allocation_counter.cpp) over
// glibc's, and a dlopen'ed plugin, whose own C++ runtime allocates through malloc, binds to them.
#include <cstdint>

namespace ncclbot::bench {

// Starts counting this thread's allocations from 0.
void start_counting_allocations();
// Stops, and returns how many there were.
uint64_t stop_counting_allocations();

}  // namespace ncclbot::bench
