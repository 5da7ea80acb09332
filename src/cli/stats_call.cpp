#include "cli/stats_call.hpp"

#include <stdexcept>

#include "cli/stats_handlers.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::cli {

nlohmann::json stats_call(const StatsCallOptions& o, const JsonInput& in) {
  for (const StatsTest& test : stats_tests()) {
    if (test.name != o.test) continue;
    try {
      return test.run(in, StatsRunOptions{o.threads});
    } catch (const InputError&) {
      throw;
    } catch (const UsageError& e) {
      in.fail(e.what());
    } catch (const std::invalid_argument& e) {
      in.fail(e.what());
    }
  }
  throw UsageError("stats: unknown test '" + o.test + "'");
}

}  // namespace ncclbot::cli
