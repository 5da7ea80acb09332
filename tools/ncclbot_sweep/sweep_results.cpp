#include "sweep_results.hpp"

#include <ostream>

#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/io/sweep_side_data.hpp"

namespace ncclbot::sweep_tool {

namespace {

void write_context_columns(std::ostream& out, const Context& c) {
  out << c.fabric << ',' << collective_name(c.collective) << ',' << c.nodes << ',' << c.gpus_per_node << ','
      << c.bytes << ',';
}

void write_own(const std::vector<ContextResult>& done, const std::string& path) {
  OutputFile file(path, "--out");
  std::ostream& out = file.stream();
  out << "fabric,collective,nodes,gpus_per_node,bytes,sample,time_us\n";
  for (const ContextResult& r : done)
    for (size_t i = 0; i < r.own_samples.size(); ++i) {
      write_context_columns(out, r.context);
      out << i << ',' << format_float(r.own_samples[i]) << '\n';
    }
  file.commit();
}

// NCCL's words as one CSV field: quoted, with its quotes doubled and line breaks as spaces.
std::string csv_field(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"')
      out += "\"\"";
    else
      out += (ch == '\n' || ch == '\r') ? ' ' : ch;
  }
  return out + "\"";
}

void write_unavailable(const std::vector<ContextResult>& done, const std::string& path) {
  OutputFile file(path, "--out");
  std::ostream& out = file.stream();
  out << "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,reason\n";
  for (const ContextResult& r : done)
    for (const auto& [arm, reason] : r.unavailable) {
      write_context_columns(out, r.context);
      out << algo_name(arm.algo) << ',' << proto_name(arm.proto) << ',' << arm.channels << ','
          << arm.chunk_bytes << ',' << csv_field(reason) << '\n';
    }
  file.commit();
}

}  // namespace

SweepFiles sweep_files(const std::string& out) {
  const bool csv = out.size() > 4 && out.compare(out.size() - 4, 4, ".csv") == 0;
  const std::string stem = csv ? out.substr(0, out.size() - 4) : out;
  return {out, stem + ".nccl-own.csv", stem + ".unavailable.csv"};
}

void write_sweep_files(const std::vector<ContextResult>& done, const SweepFiles& files) {
  SweepBuilder builder(files.sweep);
  for (const ContextResult& r : done)
    for (size_t a = 0; a < r.arms.size(); ++a)
      for (size_t i = 0; i < r.samples[a].size(); ++i)
        builder.add(r.context, r.arms[a], int(i), r.samples[a][i], std::nullopt, 0);
  if (builder.rows() > 0) {
    const Sweep sweep = builder.build();
    // One sample per timed call: the side file says so, as ingest's does for per-iteration samples.
    const std::string side = sweep_side_data_text(sweep.dynamics(), "iterations");
    check_sweep_side_data_writable(files.sweep, side);
    OutputFile out(files.sweep, "--out");
    write_sweep_csv(sweep, out.stream());
    out.commit();
    write_sweep_side_data(files.sweep, side);
  }
  write_own(done, files.own);
  write_unavailable(done, files.unavailable);
}

}  // namespace ncclbot::sweep_tool
