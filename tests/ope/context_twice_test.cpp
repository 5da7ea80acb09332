// A context described twice: an identical repeat (another communicator of the same shape) is read
// as one, a repeat with another cost table or NCCL pick is refused at the second record, naming
// its file and byte, since which of the two would price NCCL's choice is not the log's to say.
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

namespace {

// decision_log_context() with `change` applied to its record.
template <typename Change>
std::string changed_context(Change change) {
  const std::string bytes = ncclbot::test::decision_log_context();
  ncclbot::decision_log::ContextRecord r =
      ncclbot::decision_log::decode_context(reinterpret_cast<const unsigned char*>(bytes.data()));
  change(r);
  unsigned char out[ncclbot::decision_log::kContextRecordBytes];
  ncclbot::decision_log::encode(r, out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

// Header, the context, calls 0 and 1, `second` (a context record), calls 2 and 3.
std::string log_with_second_context(const std::string& second) {
  std::string bytes =
      ncclbot::test::decision_log_header("policy=random\nseed=7\n") + ncclbot::test::decision_log_context();
  for (int i = 0; i < 2; ++i) bytes += ncclbot::test::decision_log_call(uint64_t(i), i, 1.0 / 6.0, 10.0 + i);
  bytes += second;
  for (int i = 2; i < 4; ++i) bytes += ncclbot::test::decision_log_call(uint64_t(i), 4, 1.0 / 6.0, 10.0 + i);
  return bytes;
}

}  // namespace

TEST(ContextTwice, AnIdenticalRepeatIsReadAsOneContext) {
  const std::string path = ncclbot::test::temp_dir() + "/same.log";
  ncclbot::test::write_file(path, log_with_second_context(ncclbot::test::decision_log_context()));
  EXPECT_EQ(ncclbot::read_decision_logs({path}).calls.size(), 4u);
  const ncclbot::test::CliResult r = ncclbot::test::run_cli("ope --log '" + path + "' --policy auto");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ContextTwice, ADifferentRepeatIsRefusedAtItsRecord) {
  const std::string dir = ncclbot::test::temp_dir();
  // The header is 16 bytes and 21 of text, padded to 40; the first context record 136 bytes, each
  // call 80: the second context record starts at byte 40 + 136 + 2 x 80 = 336.
  const std::string other_pick = changed_context([](auto& r) { r.nccl_slot = 3; });
  const std::string other_cost = changed_context([](auto& r) { r.cost_us[1] = 99.0f; });
  for (const std::string& second : {other_pick, other_cost}) {
    const std::string path = dir + "/twice.log";
    ncclbot::test::write_file(path, log_with_second_context(second));
    EXPECT_THROW(ncclbot::read_decision_logs({path}), ncclbot::InputError);
    for (const std::string& args : {"ope --log '" + path + "' --policy auto",
                                    "telemetry '" + path + "' --out '" + dir + "/t' --no-figures"}) {
      const ncclbot::test::CliResult r = ncclbot::test::run_cli(args);
      EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
      EXPECT_NE(r.err.find(path + ": byte 336: a second, different record of context"), std::string::npos)
          << args << ": " << r.err;
      EXPECT_NE(r.err.find("(the first is at byte 40 of " + path + ")"), std::string::npos) << r.err;
    }
  }
}
