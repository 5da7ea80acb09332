#pragma once
// NCCL's cost table as the tuner receives it: a contiguous float[numAlgo][numProto] passed as
// float** (NCCL src/enqueue.cc; docs/plugin.md "NCCL's ABI, as ncclbot declares it"), so it is cast
// back to rows, never dereferenced as pointers.
// Negative entries (-1 = NCCL_ALGO_PROTO_IGNORE) are never written.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/arm.hpp"

namespace ncclbot::plugin {

class CostTable {
 public:
  CostTable(float** table, int num_algo, int num_proto)
      : data_(reinterpret_cast<float*>(table)), num_algo_(num_algo), num_proto_(num_proto) {}

  bool present() const { return data_ != nullptr && num_algo_ > 0 && num_proto_ > 0; }
  // Only NCCL's 7 x 3 arms are ncclbot arms; extra rows or columns of a wider table are left alone
  // (a row 7 is some future NCCL algorithm, never the simulated HiPIPE slot).
  int arm_algos() const { return num_algo_ < kNumNcclAlgos ? num_algo_ : kNumNcclAlgos; }
  int arm_protos() const { return num_proto_ < kNumProtos ? num_proto_ : kNumProtos; }

  float at(int algo, int proto) const { return data_[algo * num_proto_ + proto]; }
  static bool usable(float v) { return usable_cost(v); }
  bool usable(int algo, int proto) const { return usable(at(algo, proto)); }
  bool usable_slot(int slot) const {
    if (!is_nccl_slot(slot)) return false;
    const int a = slot / kNumProtos, p = slot % kNumProtos;
    return a < arm_algos() && p < arm_protos() && usable(a, p);
  }
  float at_slot(int slot) const { return at(slot / kNumProtos, slot % kNumProtos); }

  // A policy's prior over every slot ncclbot knows: NCCL's usable costs, -1 elsewhere (always -1
  // on the simulated slots >= kNumNcclArms, so no policy can ever be offered them).
  void prior(float (&out)[kNumArms]) const {
    for (int s = 0; s < kNumArms; ++s) out[s] = usable_slot(s) ? at_slot(s) : -1.0f;
  }

  // The arms NCCL could run for this call (slot = algo * 3 + proto).
  ArmMask usable_arms() const {
    ArmMask m;
    if (!present()) return m;
    for (int a = 0; a < arm_algos(); ++a)
      for (int p = 0; p < arm_protos(); ++p)
        if (usable(a, p)) m.set(a * kNumProtos + p);
    return m;
  }

  // NCCL's own pick over the whole table: smallest non-negative entry, strict '<', row-major order,
  // so ties go to the lowest algorithm, then the lowest protocol. Returns {algo, proto} or {-1, -1}.
  void nccl_pick(int* algo, int* proto) const {
    *algo = -1;
    *proto = -1;
    if (!present()) return;
    float best = 0.0f;
    for (int a = 0; a < num_algo_; ++a)
      for (int p = 0; p < num_proto_; ++p) {
        const float v = at(a, p);
        if (!usable(v)) continue;
        if (*algo < 0 || v < best) {
          best = v;
          *algo = a;
          *proto = p;
        }
      }
  }
  int nccl_pick_slot() const {
    int a = -1, p = -1;
    nccl_pick(&a, &p);
    return (a < 0 || a >= kNumNcclAlgos || p >= kNumProtos) ? -1 : a * kNumProtos + p;
  }

  // Makes NCCL pick `slot`: its entry becomes 0. Returns false (and writes nothing) when the entry
  // is not usable. Another entry already at 0 in an earlier slot would still win the tie; NCCL
  // produces 0 only for the single Ring/Simple entry of a one-rank communicator.
  bool choose(int slot) {
    if (!present() || slot < 0 || !usable_slot(slot)) return false;
    data_[(slot / kNumProtos) * num_proto_ + slot % kNumProtos] = 0.0f;
    return true;
  }

 private:
  float* data_;
  int num_algo_, num_proto_;
};

// A prior in CostTable::prior's layout from NCCL's 21 costs by slot (a follower's request, a state
// file's entry): the slots past NCCL's are never usable.
inline void prior_of_nccl_costs(const float* costs, float (&prior)[kNumArms]) {
  for (int s = 0; s < kNumArms; ++s) prior[s] = s < kNumNcclArms ? costs[s] : -1.0f;
}

// The NCCL arms whose cost in a prior (CostTable::prior's layout) is usable: NCCL's slots only, so a
// prior never offers the simulated HiPIPE slot to a policy.
inline ArmMask usable_prior_arms(const float* prior) {
  ArmMask m;
  for (int s = 0; s < kNumNcclArms; ++s)
    if (usable_cost(prior[s])) m.set(s);
  return m;
}

}  // namespace ncclbot::plugin
