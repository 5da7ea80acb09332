#include "ncclbot/replay/communicators.hpp"

#include <bit>
#include <map>
#include <string>
#include <tuple>

#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/first_use.hpp"
#include "ncclbot/replay/loss.hpp"

namespace ncclbot {

Communicators communicators_of(const Sweep& sweep, const std::vector<int>& contexts) {
  using Key = std::tuple<std::string, int, int>;  // fabric, nodes, GPUs per node
  std::map<Key, int> index;
  std::vector<std::vector<int>> groups;
  for (size_t i = 0; i < contexts.size(); ++i) {
    const Context& c = sweep.context(contexts[i]);
    const auto [it, fresh] = index.try_emplace(Key{c.fabric, c.nodes, c.gpus_per_node}, int(groups.size()));
    if (fresh) groups.emplace_back();
    groups[size_t(it->second)].push_back(int(i));
  }
  const SweepView v = sweep.arm_view();
  Communicators out;
  out.begin.push_back(0);
  for (const auto& g : groups) {
    unsigned algos = 0;  // the distinct algorithms of the members' best arms
    for (int i : g) {
      out.members.push_back(i);
      const int c = contexts[size_t(i)];
      algos |= 1u << int(v.arm(c, best_slot(v, c)).algo);
    }
    out.begin.push_back(int(out.members.size()));
    out.connected.push_back(std::popcount(algos));
  }
  return out;
}

Communicators first_use_communicators(const Sweep& sweep, const std::vector<int>& contexts) {
  return sweep.arm_view().first_use_us != nullptr ? communicators_of(sweep, contexts) : Communicators{};
}

void charge_first_uses(const ReplayJob& job, const Communicators& comms,
                       const std::vector<uint64_t>& stream_ids, const uint32_t* first_use, double* online,
                       size_t configs, int horizon) {
  const ChargeFirstUses charge{job.sweep->arm_view(),
                               job.contexts.data(),
                               stream_ids.data(),
                               comms.members.data(),
                               comms.begin.data(),
                               comms.connected.data(),
                               first_use,
                               online,
                               comms.count(),
                               job.seeds,
                               int(job.contexts.size()),
                               horizon,
                               job.seed_base};
  parallel_for(configs * size_t(job.seeds) * size_t(comms.count()), job.threads,
               [&](size_t item) { charge(int64_t(item)); });
}

}  // namespace ncclbot
