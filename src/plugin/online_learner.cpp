#include "plugin/online_learner.hpp"

#include <cmath>
#include <cstring>

#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

constexpr size_t kMemoKeep = size_t(1) << 20;  // decisions kept per context for slow followers

// NCCL's slots only: a prior never offers the simulated HiPIPE slot to a policy.
ArmMask mask_of(const float* prior) {
  ArmMask m;
  for (int s = 0; s < kNumNcclArms; ++s)
    if (prior[s] >= 0.0f && std::isfinite(prior[s])) m.set(s);
  return m;
}

}  // namespace

OnlineLearner::OnlineLearner(uint64_t comm_id, int nranks, int nnodes,
                             std::shared_ptr<const PolicyEngine> engine, bool memoize)
    : comm_id_(comm_id), nranks_(nranks), nnodes_(nnodes), engine_(std::move(engine)), memoize_(memoize) {}

OnlineLearner::Context& OnlineLearner::context_locked(int key, uint64_t bytes, const float* prior) {
  std::unique_ptr<Context>& c = contexts_[key];
  if (!c) {
    c = std::make_unique<Context>();
    c->first_bytes = bytes;
    std::memcpy(c->prior, prior, sizeof c->prior);
    c->mask = mask_of(prior);
    engine_->reset(c->policy, c->mask, c->prior);
    // The replay stream of this context: what the replay engine uses for the same
    // (collective, nodes, GPUs per node, bytes), so plugin-check can compare call for call.
    const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
    c->stream_id = replay_stream_id(key_collective(key), nnodes_, gpn, c->first_bytes);
  }
  return *c;
}

int OnlineLearner::fresh_decision_locked(Context& c) {
  ++decisions_;
  if (!active_ || c.mask.empty()) return -1;
  const int slot = engine_->select(c.policy, c.stream_id, c.steps);
  ++c.steps;
  return (is_nccl_slot(slot) && c.mask.has(slot)) ? slot : -1;
}

int OnlineLearner::decide_at_locked(Context& c, uint64_t index) {
  if (!memoize_) return fresh_decision_locked(c);
  if (index < c.memo_base) return -1;  // older than anything kept: NCCL's choice (see kMemoKeep)
  while (c.memo_base + c.memo.size() <= index) c.memo.push_back(int8_t(fresh_decision_locked(c)));
  const int slot = c.memo[index - c.memo_base];
  if (c.memo.size() > 2 * kMemoKeep) {
    c.memo.erase(c.memo.begin(), c.memo.begin() + long(kMemoKeep));
    c.memo_base += kMemoKeep;
  }
  return slot;
}

int OnlineLearner::decide_next(int key, uint64_t bytes, const float* prior) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context& c = context_locked(key, bytes, prior);
  return decide_at_locked(c, c.next_call++);
}

int OnlineLearner::decide_next(int key, uint64_t bytes, const CostTable& table) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr) {
    float prior[kNumArms];
    table.prior(prior);
    c = &context_locked(key, bytes, prior);
  }
  return decide_at_locked(*c, c->next_call++);
}

int OnlineLearner::decide_at(int key, uint64_t bytes, const CostTable& table, uint64_t index) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr) {
    float prior[kNumArms];
    table.prior(prior);
    c = &context_locked(key, bytes, prior);
  }
  return decide_at_locked(*c, index);
}

void OnlineLearner::decide_range(int key, uint64_t bytes, const float* prior, uint64_t start, int count,
                                 int8_t* out) {
  if (key < 0 || key >= kNumContextKeys) {
    for (int i = 0; i < count; ++i) out[i] = -1;
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Context& c = context_locked(key, bytes, prior);
  for (int i = 0; i < count; ++i) out[i] = int8_t(decide_at_locked(c, start + uint64_t(i)));
}

bool OnlineLearner::observe(int key, int slot, double latency_us) {
  if (key < 0 || key >= kNumContextKeys || !is_nccl_slot(slot)) return false;
  if (!(latency_us > 0.0) || !std::isfinite(latency_us)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr || !c->mask.has(slot)) return false;
  engine_->update(c->policy, slot, latency_us);
  ++observations_;
  return true;
}

void OnlineLearner::set_active(bool active) {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = active;
}

bool OnlineLearner::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

uint64_t OnlineLearner::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decisions_;
}

uint64_t OnlineLearner::observations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observations_;
}

void OnlineLearner::export_contexts(StateFile& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int key = 0; key < kNumContextKeys; ++key) {
    const Context* c = contexts_[key].get();
    if (c == nullptr) continue;
    StateEntry e;
    e.nranks = uint32_t(nranks_);
    e.nnodes = uint32_t(nnodes_);
    e.key = uint32_t(key);
    e.mask = c->mask.bits;
    e.steps = c->steps;
    e.bytes = c->first_bytes;
    std::memcpy(e.prior, c->prior, sizeof e.prior);
    const auto* p = reinterpret_cast<const uint8_t*>(&c->policy);
    e.policy.assign(p, p + sizeof(PolicyState));
    file.put(std::move(e));
  }
}

int OnlineLearner::import_contexts(const StateFile& file) {
  if (file.state_size() != sizeof(PolicyState)) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  int restored = 0;
  for (const StateEntry& e : file.entries()) {
    if (e.nranks != uint32_t(nranks_) || e.nnodes != uint32_t(nnodes_) || e.key >= uint32_t(kNumContextKeys))
      continue;
    if (e.policy.size() != sizeof(PolicyState) || contexts_[e.key]) continue;
    auto c = std::make_unique<Context>();
    c->mask = ArmMask{e.mask}.nccl_arms();
    std::memcpy(c->prior, e.prior, sizeof e.prior);  // NCCL's 21 slots; the rest are never valid
    for (int s = kNumNcclArms; s < kNumArms; ++s) c->prior[s] = -1.0f;
    std::memcpy(static_cast<void*>(&c->policy), e.policy.data(), sizeof(PolicyState));
    c->steps = e.steps;
    c->first_bytes = e.bytes;
    const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
    c->stream_id = replay_stream_id(key_collective(int(e.key)), nnodes_, gpn, c->first_bytes);
    contexts_[e.key] = std::move(c);
    ++restored;
  }
  return restored;
}

}  // namespace ncclbot::plugin
