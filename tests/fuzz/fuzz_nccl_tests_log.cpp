// libFuzzer target: any bytes given to the nccl-tests log parser and to ingestion must end in a
// result or an InputError/UsageError; anything else (a crash, a sanitizer report, another
// exception type) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"

using namespace ncclbot;
using namespace ncclbot::nccl_tests;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Label the input as a forced run, with and without a job shape, so ingestion goes past the
  // arm check into topology, bandwidth checks and sweep building.
  static const Manifest labelled = parse_manifest(
      "[[run]]\nfile = \"fuzz.txt\"\nalgo = \"Ring\"\nproto = \"Simple\"\ncollective = \"allreduce\"\n",
      "/nonexistent/runs.toml");
  static const Manifest shaped = parse_manifest(
      "[[run]]\nfile = \"fuzz.txt\"\nalgo = \"Ring\"\nproto = \"Simple\"\ncollective = \"allreduce\"\n"
      "nodes = 2\ngpus_per_node = 4\n",
      "/nonexistent/runs.toml");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ParsedLog log = parse_log(text, "fuzz.txt");
    IngestOptions options;
    options.skip_failed = options.skip_unforced = true;
    options.placement = size % 2 ? Placement::kBoth : Placement::kOutOfPlace;
    ingest_parsed({log}, size % 3 ? &labelled : &shaped, options);
  } catch (const InputError&) {
  } catch (const UsageError&) {
  }
  return 0;
}
