#include "ncclbot/stats/alternative.hpp"

#include "ncclbot/core/error.hpp"

namespace ncclbot {

Alternative parse_alternative(std::string_view text, std::string_view what) {
  if (text == "two-sided") return Alternative::two_sided;
  if (text == "greater") return Alternative::greater;
  if (text == "less") return Alternative::less;
  throw UsageError(std::string(what) + " must be \"two-sided\", \"greater\" or \"less\", not \"" +
                   std::string(text) + "\"");
}

std::string to_string(Alternative a) {
  switch (a) {
    case Alternative::greater:
      return "greater";
    case Alternative::less:
      return "less";
    default:
      return "two-sided";
  }
}

}  // namespace ncclbot
