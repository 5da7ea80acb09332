#include "plugin/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <type_traits>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/byte_codec.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/knob_seed.hpp"
#include "plugin/regular_file.hpp"
#include "plugin/state_file_io.hpp"

namespace ncclbot::plugin {
// The format's readers and writers: a named namespace, not an anonymous one, since the templates
// below capture them in lambdas (an anonymous type there gives the template's members internal
// linkage, which the compiler warns about).
namespace state_codec {

constexpr char kMagic[8] = {'N', 'C', 'C', 'L', 'B', 'O', 'T', 'S'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kEntryFixedBytes = 4 * 4 + 8 + 8 + 4 * kNumNcclArms + 4 + 4;

// A bounds-checked little-endian reader: every get fails (and stays failed) past the end.
class Reader {
 public:
  Reader(const std::string& bytes, size_t end)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(end) {}
  bool ok() const { return ok_; }
  size_t at() const { return at_; }
  template <typename T>
  T get() {
    if (!ok_ || end_ - at_ < sizeof(T)) {
      ok_ = false;
      return T(0);
    }
    const T v = load_le<T>(p_ + at_);
    at_ += sizeof(T);
    return v;
  }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  float f32() { return get<float>(); }

 private:
  const uint8_t* p_;
  size_t end_, at_ = 0;
  bool ok_ = true;
};

// visit_state() visitors: f(values, n, lo, hi). Doubles travel as IEEE bits, integers as int64;
// every value must be finite and within [lo, hi] both ways.
template <typename T>
bool value_fits(T v, double lo, double hi) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(v) && double(v) >= lo && double(v) <= hi;
  else
    return double(v) >= lo && double(v) <= hi;
}

struct ValueWriter {
  std::string* out;
  uint32_t count = 0;
  bool ok = true;
  template <typename T>
  void operator()(T* values, int n, double lo, double hi) {
    for (int i = 0; i < n; ++i) {
      ok = ok && value_fits(values[i], lo, hi);
      if constexpr (std::is_floating_point_v<T>)
        append_le<double>(*out, double(values[i]));
      else
        append_le<uint64_t>(*out, uint64_t(int64_t(values[i])));
      ++count;
    }
  }
};

struct ValueReader {
  Reader* in;
  uint32_t left;
  bool ok = true;
  template <typename T>
  void operator()(T* values, int n, double lo, double hi) {
    if (n < 0) ok = false;
    for (int i = 0; ok && i < n; ++i) {
      if (left == 0) {
        ok = false;
        return;
      }
      --left;
      if constexpr (std::is_floating_point_v<T>) {
        const double d = in->get<double>();
        ok = value_fits(d, lo, hi);
        if (ok) values[i] = T(d);
      } else {
        const int64_t v = int64_t(in->u64());
        using L = std::numeric_limits<T>;
        const bool fits = std::is_unsigned_v<T> ? v >= 0 && uint64_t(v) <= uint64_t(L::max())
                                                : v >= int64_t(L::min()) && v <= int64_t(L::max());
        ok = fits && double(v) >= lo && double(v) <= hi;
        if (ok) values[i] = T(v);
      }
    }
  }
};

// The header's arms field (format 3): 0 for one arm per algorithm x protocol, 1 and the lists for
// knob arms (`knobs` non-null).
void write_arms(std::string& out, const KnobSpec* knobs) {
  append_le<uint32_t>(out, knobs ? 1 : 0);
  if (!knobs) return;
  append_le<uint32_t>(out, uint32_t(knobs->channels.size()));
  for (int c : knobs->channels) append_le<uint32_t>(out, uint32_t(c));
  for (const auto& list : knobs->chunks) {
    append_le<uint32_t>(out, uint32_t(list.size()));
    for (uint32_t c : list) append_le<uint32_t>(out, c);
  }
}

// Reads the arms field; why it is not the field of a learner over `knobs` (null: slot arms), or
// empty when it is.
std::string read_arms(Reader& in, const KnobSpec* knobs) {
  const uint32_t knob_arms = in.u32();
  if (!in.ok() || knob_arms > 1) return "bad header";
  // A list as long as the file could hold, read whole: compared with this job's afterwards.
  const auto list = [&in](std::vector<uint32_t>& out) {
    const uint32_t n = in.u32();
    for (uint32_t i = 0; i < n && in.ok(); ++i) out.push_back(in.u32());
  };
  std::vector<uint32_t> channels, chunks[kNumProtos];
  if (knob_arms == 1) {
    list(channels);
    for (auto& c : chunks) list(c);
  }
  if (!in.ok()) return "truncated";
  if (!knobs && knob_arms == 1) return "written over knob arms (NCCLBOT_KNOBS), not here";
  if (knobs && knob_arms == 0) return "written over one arm per algorithm and protocol, not knob arms";
  if (knobs) {
    bool same = channels.size() == knobs->channels.size() &&
                std::equal(channels.begin(), channels.end(), knobs->channels.begin(),
                           [](uint32_t a, int b) { return a == uint32_t(b); });
    for (int p = 0; p < kNumProtos; ++p) same = same && chunks[p] == knobs->chunks[p];
    if (!same) return "written for other NCCLBOT_KNOBS lists";
  }
  return std::string();
}

}  // namespace state_codec

using namespace state_codec;

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

bool has_state_magic(const std::string& bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kMagic, 8) == 0;
}

template <int N>
void StateFileT<N>::put(StateEntryT<N> entry) {
  for (StateEntryT<N>& e : entries_)
    if (e.nranks == entry.nranks && e.nnodes == entry.nnodes && e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  entries_.push_back(std::move(entry));
}

template <int N>
bool StateFileT<N>::fresh_policy(uint32_t mask, const float* prior, AnyPolicyT<N>* policy) const {
  if constexpr (kKnobs) {
    float slot_prior[kNumArms], arm_prior[N];
    prior_of_nccl_costs(prior, slot_prior);
    std::vector<Arm> arms;
    ArmMaskT<N> arm_mask;
    (void)mask;  // the slots the prior leaves (decode checks they agree)
    return seed_knob_policy<N>(engine_, *knobs_, slot_prior, arms, arm_prior, arm_mask, *policy) <= size_t(N);
  } else {
    engine_.reset(*policy, ArmMask{mask}, prior);
    return true;
  }
}

template <int N>
std::string StateFileT<N>::encode() const {
  std::string out(kMagic, 8);
  append_le<uint32_t>(out, kStateFileVersion);
  append_le<uint32_t>(out, 0);
  append_le<uint64_t>(out, engine_.fingerprint());
  append_le<uint32_t>(out, uint32_t(engine_.kind()));
  write_arms(out, kKnobs ? knobs_ : nullptr);
  const size_t count_at = out.size();
  append_le<uint32_t>(out, 0);
  uint32_t written = 0;
  // At most the entries a reader takes: the most recently put (this job's come last).
  const size_t first = entries_.size() > kMaxStateEntries<N> ? entries_.size() - kMaxStateEntries<N> : 0;
  for (size_t i = first; i < entries_.size(); ++i) {
    const StateEntryT<N>& e = entries_[i];
    std::string entry;
    append_le<uint32_t>(entry, e.nranks);
    append_le<uint32_t>(entry, e.nnodes);
    append_le<uint32_t>(entry, e.key);
    append_le<uint32_t>(entry, e.mask);
    append_le<uint64_t>(entry, e.steps);
    append_le<uint64_t>(entry, e.bytes);
    for (float f : e.prior) append_le<float>(entry, f);
    std::string values;
    ValueWriter writer{&values};
    const auto copy = std::make_unique<AnyPolicyT<N>>(e.policy);  // visit_state takes it mutable
    with_policy(*copy, [&](auto& p) { p.visit_state(writer); });
    if (!writer.ok || writer.count > kMaxStateValues<N>) continue;  // a state that would not load again
    append_le<uint32_t>(entry, writer.count);
    append_le<uint32_t>(entry, 0);
    out += entry;
    out += values;
    ++written;
  }
  for (int i = 0; i < 4; ++i) out[count_at + size_t(i)] = char(uint8_t(written >> (8 * i)));
  append_le<uint64_t>(out, fnv1a64(out.data(), out.size()));
  return out;
}

template <int N>
bool StateFileT<N>::decode(const std::string& bytes, std::string* why) {
  entries_.clear();
  auto fail = [&](const std::string& reason) {
    entries_.clear();
    *why = reason;
    return false;
  };
  if (!has_state_magic(bytes)) return fail("not an ncclbot state file");
  if (bytes.size() < kHeaderBytes + 8) return fail("truncated");
  const uint64_t checksum = load_le<uint64_t>(bytes.data() + bytes.size() - 8);
  Reader in(bytes, bytes.size() - 8);
  in.u64();  // the magic, checked above (has_state_magic)
  const uint32_t version = in.u32();
  if (version != kStateFileVersion && version != 2)
    return fail("state file version " + std::to_string(version) + " is not " +
                std::to_string(kStateFileVersion) + " or 2");
  if (fnv1a64(bytes.data(), bytes.size() - 8) != checksum)
    return fail("checksum mismatch (corrupt or truncated)");
  const uint32_t reserved = in.u32();
  const uint64_t fingerprint = in.u64();
  const uint32_t kind = in.u32();
  if (reserved != 0) return fail("bad header");
  if (fingerprint != engine_.fingerprint() || kind != uint32_t(engine_.kind()))
    return fail("written for another policy (" + engine_.spec() + " here)");
  if (version == 2 && kKnobs) return fail("format 2 holds no knob arms");
  if (version != 2)  // format 3: which arms
    if (const std::string other = read_arms(in, kKnobs ? knobs_ : nullptr); !other.empty())
      return fail(other);
  const uint32_t count = in.u32();
  if (count > kMaxStateEntries<N> || count > (bytes.size() - kHeaderBytes) / kEntryFixedBytes)
    return fail("entry count " + std::to_string(count) + " does not fit the file");
  if constexpr (!kKnobs) entries_.reserve(count);  // knob entries are large: only those read are kept
  for (uint32_t i = 0; i < count; ++i) {
    const std::string where = "entry " + std::to_string(i) + ": ";
    StateEntryT<N> e;
    e.nranks = in.u32();
    e.nnodes = in.u32();
    e.key = in.u32();
    e.mask = in.u32();
    e.steps = in.u64();
    e.bytes = in.u64();
    for (float& f : e.prior) f = in.f32();
    const uint32_t values = in.u32();
    const uint32_t zero = in.u32();
    if (!in.ok()) return fail(where + "truncated");
    if (e.nranks < 1 || e.nranks >= (1u << 30) || e.nnodes < 1 || e.nnodes > e.nranks)
      return fail(where + "bad rank or node count");
    if (e.key >= uint32_t(kNumContextKeys) || zero != 0) return fail(where + "bad context key");
    if (ArmMask{e.mask} != ArmMask{e.mask}.nccl_arms() || !(ArmMask{e.mask} == usable_prior_arms(e.prior)))
      return fail(where + "arm mask does not match the prior");
    if (values > kMaxStateValues<N>) return fail(where + "too many values");
    if (!fresh_policy(e.mask, e.prior, &e.policy)) return fail(where + "more knob arms than a policy holds");
    ValueReader reader{&in, values};
    with_policy(e.policy, [&](auto& p) { p.visit_state(reader); });
    if (!reader.ok || !in.ok()) return fail(where + "a policy value is out of range or missing");
    if (reader.left != 0) return fail(where + "more values than the policy has");
    put(std::move(e));
  }
  if (in.at() != bytes.size() - 8) return fail("trailing bytes after the entries");
  return true;
}

template <int N>
bool StateFileT<N>::load(const std::string& path, std::string* warning) {
  entries_.clear();
  ReadRules rules;
  rules.max_bytes = kMaxStateFileBytes;
  rules.no_follow = true;
  std::string bytes, why;
  const ReadResult r = read_regular_file(path, rules, &bytes, &why);
  if (r == ReadResult::kMissing) return true;
  if (r == ReadResult::kRefused) {
    *warning = "NCCLBOT_STATE=" + why + "; not used";
    return false;
  }
  if (!decode(bytes, &why)) {
    *warning = "NCCLBOT_STATE=" + path + ": " + why + "; ignoring it and starting from the prior";
    return false;
  }
  return true;
}

template <int N>
bool StateFileT<N>::save(const std::string& path, std::string* warning) const {
  // Merged under the directory's lock: entries of other contexts and shapes kept, this job's replace
  // their own; an ncclbot file that no longer decodes (another policy or arms) is replaced.
  return save_state_bytes(
      path,
      [&](const std::string* existing) {
        StateFileT<N> merged(engine_, knobs_);
        std::string why;
        if (existing != nullptr && !merged.decode(*existing, &why)) merged.entries_.clear();
        for (const StateEntryT<N>& e : entries_) merged.put(e);
        return merged.encode();
      },
      warning);
}

std::mutex& state_file_mutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed, like the runtime
  return *mu;
}

template class StateFileT<kNumArms>;
template class StateFileT<kKnobReplayArms>;

}  // namespace ncclbot::plugin
