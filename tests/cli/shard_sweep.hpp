#pragma once
// What the shard-and-merge command-line tests share: a small sweep file and shell quoting.
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace ncclbot::test {

// 4 and 16 nodes, two sizes, two collectives: 8 contexts; arm times differ per context so every
// policy (and every grid point) sees different losses. Written to dir/sweep.csv.
inline std::string write_shard_sweep(const std::string& dir) {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  int k = 0;
  for (const char* coll : {"allreduce", "allgather"})
    for (int nodes : {4, 16})
      for (int bytes : {1024, 65536}) {
        ++k;
        const std::string ctx =
            "h100-ib-a," + std::string(coll) + "," + std::to_string(nodes) + ",8," + std::to_string(bytes);
        for (int r = 0; r < 3; ++r) {
          csv += ctx + ",Tree,LL," + std::to_string(r) + "," + std::to_string(30 + k + r) + ",10\n";
          csv += ctx + ",Ring,LL128," + std::to_string(r) + "," + std::to_string(20 + 2 * k - r) + ",15\n";
          csv +=
              ctx + ",Ring,Simple," + std::to_string(r) + "," + std::to_string(25 + (k * 7) % 11) + ",40\n";
        }
      }
  const std::string path = dir + "/sweep.csv";
  write_file(path, csv);
  return path;
}

// " 'a' 'b' ..." for a command line.
inline std::string quoted(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += " '" + f + "'";
  return s;
}

}  // namespace ncclbot::test
