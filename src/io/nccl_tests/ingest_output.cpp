#include "ncclbot/io/nccl_tests/ingest_output.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/io/sweep_side_data.hpp"

namespace ncclbot::nccl_tests {
namespace {

namespace fs = std::filesystem;

// The arm columns as the sweep CSV has them: channels and chunk_bytes only when some arm sets one.
constexpr const char* kNoiseHead = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto";
constexpr const char* kNoiseTail = "sample,i_min_us,i_max_us,i_p99_us,i_cv_pct";

bool same_path(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

void write(const std::string& path, const std::string& text) {
  try {
    write_file_atomic(path, text);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--out: ") + e.what());
  }
}

}  // namespace

std::string sample_kind_word(SampleKind k) {
  return k == SampleKind::kIterations ? "iterations" : "mean";
}

std::string noise_sidecar_path(const std::string& sweep_path) {
  fs::path p(sweep_path);
  const std::string stem = p.extension() == ".csv" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + ".noise.csv")).string();
}

std::string noise_csv(const std::vector<NoiseRow>& rows) {
  std::vector<const NoiseRow*> sorted;
  for (const NoiseRow& r : rows) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const NoiseRow* a, const NoiseRow* b) {
    return std::tie(a->context, a->arm, a->sample) < std::tie(b->context, b->arm, b->sample);
  });
  const bool knobs =
      std::any_of(rows.begin(), rows.end(), [](const NoiseRow& r) { return !r.arm.default_knobs(); });
  std::ostringstream os;
  os << kNoiseHead << (knobs ? ",channels,chunk_bytes," : ",") << kNoiseTail << '\n';
  for (const NoiseRow* r : sorted) {
    const Context& c = r->context;
    os << c.fabric << ',' << collective_name(c.collective) << ',' << c.nodes << ',' << c.gpus_per_node << ','
       << c.bytes << ',' << algo_name(r->arm.algo) << ',' << proto_name(r->arm.proto) << ',';
    if (knobs) os << r->arm.channels << ',' << r->arm.chunk_bytes << ',';
    os << r->sample << ',' << r->summary.min_us.value << ',' << r->summary.max_us.value << ','
       << r->summary.p99_us.value << ',' << r->summary.cv_pct.value << '\n';
  }
  return os.str();
}

void check_output_is_not_input(const std::string& out, const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs)
    if (same_path(out, in))
      throw UsageError("--out " + out + " is an input (" + in + "): refusing to overwrite it");
  if (same_path(noise_sidecar_path(out), out))
    throw UsageError("--out " + out + ": choose a name ending in .csv");
  for (const std::string& in : inputs)
    if (same_path(noise_sidecar_path(out), in))
      throw UsageError("--out " + out + ": its noise sidecar " + noise_sidecar_path(out) + " is an input");
}

std::string write_ingest_output(const IngestResult& result, const std::string& out) {
  const fs::path out_path(out);
  std::error_code ec;
  if (out_path.has_parent_path()) fs::create_directories(out_path.parent_path(), ec);
  if (ec) throw UsageError("--out: cannot create the folder of " + out + ": " + ec.message());
  std::ostringstream csv;
  write_sweep_csv(result.sweep, csv);
  const std::string side = sweep_side_data_text(result.sweep.dynamics(), sample_kind_word(result.samples));
  check_sweep_side_data_writable(out, side);
  write(out, csv.str());
  write_sweep_side_data(out, side);
  if (result.noise.empty()) return "";
  const std::string sidecar = noise_sidecar_path(out);
  write(sidecar, noise_csv(result.noise));
  return sidecar;
}

}  // namespace ncclbot::nccl_tests
