#pragma once
// The sweep interchange format: a plain long-form CSV, one row per sample,
//   fabric,collective,nodes,gpus_per_node,bytes,algo,proto[,channels,chunk_bytes],sample,time_us[,prior_us]
// (columns in any order; channels and chunk_bytes are an arm's knobs, 0 = NCCL's own, and are
// written only for a sweep whose arms set them). What a sweep carries besides its rows (call
// dynamics) lives in a side file beside it (io/sweep_side_data.hpp); the path readers and writers
// handle both files, the stream ones the CSV alone. Lines starting with '#' are comments, and a
// leading "# dynamics: key=value ..." line (the form before the side file) is still read. Reading is
// strict (every problem is an InputError with file:line); writing then reading gives a
// bit-identical Sweep (floats are written in their shortest exact form).
#include <iosfwd>
#include <string>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

Sweep read_sweep_csv(const std::string& path);
Sweep parse_sweep_csv(std::istream& in, const std::string& source_name);

void write_sweep_csv(const Sweep& sweep, const std::string& path);
void write_sweep_csv(const Sweep& sweep, std::ostream& out);

}  // namespace ncclbot
