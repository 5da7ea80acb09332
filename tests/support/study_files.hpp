#pragma once
// The study files of tests/data/study that several tests run.
#include <string>

namespace ncclbot::test {

// The small study most study tests run.
inline const std::string kTinyStudy = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/tiny.toml";

}  // namespace ncclbot::test
