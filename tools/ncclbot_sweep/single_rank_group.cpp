#include <cstdlib>

#include "rank_group.hpp"

namespace ncclbot::sweep_tool {

namespace {

class SingleRank final : public RankGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void broadcast(void*, size_t) override {}
  void max_in_place(std::vector<double>&) override {}
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

}  // namespace

std::unique_ptr<RankGroup> make_rank_group(int*, char***) {
  return std::make_unique<SingleRank>();
}

void finish_rank_group() {}

}  // namespace ncclbot::sweep_tool
