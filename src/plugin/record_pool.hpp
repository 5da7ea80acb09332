#pragma once
// The records the profiler hands NCCL as event handles, from slabs a profiler context keeps until its
// finalize: once the pool has grown to what is in flight, taking a record and giving it back
// allocates nothing (NCCL's enqueuing and proxy threads call the profiler on every collective). A
// handle NCCL passes back is checked against the slabs before it is read, so one that is not the
// pool's is never dereferenced. Not thread-safe: the context's lock guards it.
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

namespace ncclbot::plugin {

template <typename T, size_t kSlab = 256>
class RecordPool {
  static_assert(std::is_trivially_destructible_v<T>, "records are reused and freed without destructors");

 public:
  RecordPool() = default;
  RecordPool(const RecordPool&) = delete;
  RecordPool& operator=(const RecordPool&) = delete;
  ~RecordPool() {
    for (void* s : slabs_) ::operator delete(s, std::align_val_t(alignof(T)));
  }

  // A fresh record (value-initialised); may allocate a slab when every record is taken.
  T* take() {
    if (free_.empty()) grow();
    T* r = free_.back();
    free_.pop_back();
    return new (r) T();
  }
  void give(T* r) {
    free_.push_back(r);  // capacity reserved for every record of every slab: no allocation
  }
  // Whether `p` is the address of one of the pool's records (taken or not).
  bool owns(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (void* s : slabs_) {
      const auto base = reinterpret_cast<uintptr_t>(s);
      if (a >= base && a < base + kSlab * sizeof(T) && (a - base) % sizeof(T) == 0) return true;
    }
    return false;
  }

 private:
  void grow() {
    void* s = ::operator new(kSlab * sizeof(T), std::align_val_t(alignof(T)));
    slabs_.push_back(s);
    free_.reserve(slabs_.size() * kSlab);  // room for every record given back
    T* first = static_cast<T*>(s);
    free_.resize(kSlab);  // grown only when none is free
    for (size_t i = 0; i < kSlab; ++i) free_[i] = first + (kSlab - 1 - i);
  }
  std::vector<void*> slabs_;
  std::vector<T*> free_;
};

}  // namespace ncclbot::plugin
