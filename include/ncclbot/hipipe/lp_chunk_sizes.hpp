#pragma once
// HiPIPE's adaptive chunk sizing as a linear program (solved with GLPK). With the chunk count K,
// each chunk's dimension order and each dimension's service sequence fixed, every constraint is
// linear in the chunk sizes and start times:
//   minimise C
//   t[k][j+1] >= t[k][j] + a[k][j] + b[k][j] * s_k          (a chunk's stages in sequence)
//   t[next op on d] >= t[op on d] + a + b * s               (one operation per dimension at a time)
//   C >= t[k][2D-1] + a + b * s_k,   sum_k s_k = M,   s_k >= 0,   t >= 0
// Sizes are solved as fractions of M and times in units of the unpipelined all-reduce, so every
// coefficient and bound lies in [0, 1] at any message size.
#include <vector>

#include "ncclbot/hipipe/schedule.hpp"

namespace ncclbot::hipipe {

struct LpChunkSolution {
  std::vector<double> chunk_bytes;
  double makespan_us = 0;  // the LP's optimal C
  int simplex_iterations = 0;
};

// `sequences[d]` lists operations as indices k * 2D + step (as dimension_sequences returns them).
// Throws std::runtime_error if GLPK fails; a feasible sequence always has an optimum.
LpChunkSolution solve_chunk_sizes_lp(const Network& network, double bytes,
                                     const std::vector<std::vector<int>>& rs_orders,
                                     const std::vector<std::vector<int>>& sequences);

}  // namespace ncclbot::hipipe
