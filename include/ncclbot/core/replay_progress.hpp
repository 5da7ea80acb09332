#pragma once
// Progress of a replay job (ReplayJob::progress): the engines report finished (config, context)
// units from whichever thread finished them; what is shown, and whether anything is, is the
// observer's business. Reporting changes no result.
#include <cstddef>

namespace ncclbot {

class ReplayProgress {
 public:
  virtual ~ReplayProgress() = default;
  // `units` more (config, context) units are done. Called from any worker thread.
  virtual void units_done(size_t units) = 0;
};

}  // namespace ncclbot
