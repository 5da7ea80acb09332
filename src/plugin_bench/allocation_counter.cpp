#include "plugin_bench/allocation_counter.hpp"

#include <malloc.h>

#include <cstddef>

// glibc's own allocator under its internal names (they are exported for exactly this use).
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

thread_local bool counting = false;
thread_local uint64_t allocations = 0;

inline void count() {
  if (counting) ++allocations;
}

}  // namespace

extern "C" {

void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* memalign(size_t alignment, size_t n) {
  count();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  count();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  count();
  void* p = __libc_memalign(alignment, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) {
  __libc_free(p);
}

}  // extern "C"

namespace ncclbot::bench {

void start_counting_allocations() {
  allocations = 0;
  counting = true;
}

uint64_t stop_counting_allocations() {
  counting = false;
  return allocations;
}

}  // namespace ncclbot::bench
