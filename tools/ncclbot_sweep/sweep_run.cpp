#include "sweep_run.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "alg_selection.hpp"
#include "call_order.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::sweep_tool {

namespace {

using Candidate = std::optional<Arm>;  // nullopt: NCCL's own pick

std::string describe(const Candidate& arm) {
  if (!arm) return "NCCL's own pick";
  std::string s = std::string(algo_name(arm->algo)) + "/" + std::string(proto_name(arm->proto));
  return arm->channels ? s + " on " + std::to_string(arm->channels) + " channels" : s;
}

// One context on every rank, with what it needs to say where a failure happened.
class ContextRun {
 public:
  ContextRun(const SweepOptions& options, RankGroup& group, CollectiveDevice& device, ContextResult& result,
             uint32_t index)
      : options_(options), group_(group), device_(device), result_(result), index_(index) {}

  void run() {
    device_.fill_send(context().collective, context().bytes);
    const std::vector<Candidate> active = probe(candidates());
    for (int w = 0; w < options_.warmup; ++w)
      for (int k : call_order(options_.seed, index_, ~uint32_t(w), int(active.size())))
        timed(active[size_t(k)]);
    if (group_.rank() == 0) {
      for (const Candidate& a : active)
        if (a) result_.arms.push_back(*a);
      result_.samples.assign(result_.arms.size(), {});
    }
    for (int i = 0; i < options_.iterations; ++i) round(active, uint32_t(i));
  }

 private:
  const Context& context() const { return result_.context; }

  [[noreturn]] void fail(const Candidate& arm, const std::string& reason) {
    std::fprintf(stderr,
                 "ncclbot-sweep: rank %d failed on %s %llu B, %s: %s; the run stops (the contexts "
                 "finished before this one are in %s)\n",
                 group_.rank(), std::string(collective_name(context().collective)).c_str(),
                 static_cast<unsigned long long>(context().bytes), describe(arm).c_str(), reason.c_str(),
                 options_.out.c_str());
    std::fflush(stderr);
    group_.abort(1);
    std::_Exit(1);  // abort() does not return; this says so to the compiler
  }

  // The listed arms NCCL has a kernel for, then NCCL's own pick; the others are unavailable at once.
  std::vector<Candidate> candidates() {
    std::vector<Candidate> list;
    for (const Arm& arm : options_.arms) {
      if (alg_selection(arm))
        list.emplace_back(arm);
      else if (group_.rank() == 0)
        result_.unavailable.emplace_back(arm, "NCCL has no kernel for this algorithm and protocol");
    }
    list.emplace_back(std::nullopt);
    return list;
  }

  // Each candidate once, its result checked; the ranks then agree on which NCCL refused.
  std::vector<Candidate> probe(const std::vector<Candidate>& list) {
    const size_t n = list.size();
    std::vector<double> refused(2 * n, 0.0);  // [k]: refused here; [n + k]: -refused (max = -min)
    std::vector<std::string> reasons(n);
    for (size_t k = 0; k < n; ++k) {
      device_.clear_received(context().bytes);
      const CallResult r = device_.call(context().collective, context().bytes, list[k]);
      if (r.outcome == CallOutcome::kFailed) fail(list[k], r.message);
      if (r.outcome == CallOutcome::kRefused) {
        refused[k] = 1.0;
        refused[n + k] = -1.0;
        reasons[k] = r.message;
        continue;
      }
      const std::string wrong = device_.check_received(context().collective, context().bytes);
      if (!wrong.empty()) fail(list[k], "wrong result: " + wrong);
    }
    group_.max_in_place(refused);
    std::vector<Candidate> active;
    for (size_t k = 0; k < n; ++k) {
      const bool some = refused[k] > 0.0, all = refused[n + k] < 0.0;
      if (some && !all) fail(list[k], "NCCL honoured it on some ranks and refused it on others");
      if (!some)
        active.push_back(list[k]);
      else if (group_.rank() == 0)
        result_.unavailable.emplace_back(*list[k], reasons[k]);
    }
    return active;
  }

  double timed(const Candidate& arm) {
    const CallResult r = device_.call(context().collective, context().bytes, arm);
    if (r.outcome == CallOutcome::kRefused) fail(arm, "NCCL refused an arm it honoured before: " + r.message);
    if (r.outcome == CallOutcome::kFailed) fail(arm, r.message);
    return r.time_us;
  }

  // One timed round in this iteration's order; every rank keeps the slowest rank's time.
  void round(const std::vector<Candidate>& active, uint32_t iteration) {
    std::vector<double> times(active.size(), 0.0);
    for (int k : call_order(options_.seed, index_, iteration, int(active.size())))
      times[size_t(k)] = timed(active[size_t(k)]);
    group_.max_in_place(times);
    if (group_.rank() != 0) return;
    for (size_t k = 0, a = 0; k < active.size(); ++k) {
      if (active[k])
        result_.samples[a++].push_back(float(times[k]));
      else
        result_.own_samples.push_back(float(times[k]));
    }
  }

  const SweepOptions& options_;
  RankGroup& group_;
  CollectiveDevice& device_;
  ContextResult& result_;
  uint32_t index_;
};

}  // namespace

std::vector<ContextResult> run_sweep(const SweepOptions& options, RankGroup& group, CollectiveDevice& device,
                                     const SweepFiles& files) {
  std::vector<ContextResult> done;
  const int nodes = group.size() / group.local_size();
  uint32_t index = 0;
  for (Collective collective : options.collectives)
    for (uint64_t bytes : options.bytes) {
      ContextResult result;
      result.context = Context{options.fabric, collective, nodes, group.local_size(), bytes};
      ContextRun(options, group, device, result, index++).run();
      if (group.rank() != 0) continue;
      done.push_back(std::move(result));
      write_sweep_files(done, files);
    }
  return done;
}

}  // namespace ncclbot::sweep_tool
