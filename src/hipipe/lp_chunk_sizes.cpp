#include "ncclbot/hipipe/lp_chunk_sizes.hpp"

#include <glpk.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "ncclbot/core/error.hpp"

namespace ncclbot::hipipe {

namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Sparse rows in GLPK's 1-based triplet form.
struct Triplets {
  std::vector<int> rows{0}, cols{0};
  std::vector<double> values{0.0};
  void add(int row, int col, double value) {
    if (value == 0) return;
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  }
};

// Loads the constraints into `lp` and solves it; throws unless it finds the optimum. When one
// dimension is hundreds of times slower than another, GLPK's presolver may wrongly call the LP
// infeasible and the primal simplex cycle or lose its basis: so an iteration cap well above what a
// solvable LP of this size takes, then a retry without the presolver, then the dual simplex from an
// advanced basis under another scaling. Called with solve_chunk_sizes_lp's glpk_mutex held.
void run_chunk_lp_simplex(glp_prob* lp, const Triplets& m, const std::string& network_name) {
  glp_load_matrix(lp, static_cast<int>(m.rows.size()) - 1, m.rows.data(), m.cols.data(), m.values.data());
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  params.it_lim = 1000 + 10 * (glp_get_num_rows(lp) + glp_get_num_cols(lp));
  int rc = glp_simplex(lp, &params);
  if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
    params.presolve = GLP_OFF;
    glp_std_basis(lp);
    rc = glp_simplex(lp, &params);
  }
  if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
    glp_scale_prob(lp, GLP_SF_GM | GLP_SF_EQ | GLP_SF_2N);
    glp_adv_basis(lp, 0);
    params.meth = GLP_DUALP;
    rc = glp_simplex(lp, &params);
  }
  if (rc != 0 || glp_get_status(lp) != GLP_OPT)
    throw UsageError("fabric '" + network_name +
                     "': the chunk-size LP is too ill-conditioned to solve (GLPK returned " +
                     std::to_string(rc) + "); its dimensions' bandwidths or latencies are too far apart");
}

// The optimal chunk sizes of a solved `lp` for a message of `bytes` over K chunks (x_k is column
// 1 + k). Called with solve_chunk_sizes_lp's glpk_mutex held.
LpChunkSolution read_chunk_lp_solution(glp_prob* lp, int K, double bytes, double time_unit_us) {
  LpChunkSolution out;
  out.makespan_us = glp_get_obj_val(lp) * time_unit_us;
  out.simplex_iterations = glp_get_it_cnt(lp);
  out.chunk_bytes.resize(K);
  double sum = 0;
  for (int k = 0; k < K; ++k) {
    // The simplex may return -1e-17 for a basic variable at its bound: clamp, then renormalise so
    // the sizes sum to the message exactly.
    out.chunk_bytes[k] = std::max(0.0, glp_get_col_prim(lp, 1 + k));
    sum += out.chunk_bytes[k];
  }
  for (double& s : out.chunk_bytes) s = s / sum * bytes;
  return out;
}

}  // namespace

LpChunkSolution solve_chunk_sizes_lp(const Network& network, double bytes,
                                     const std::vector<std::vector<int>>& rs_orders,
                                     const std::vector<std::vector<int>>& sequences) {
  validate_problem(network, bytes);
  const int D = network.num_dimensions();
  const int K = static_cast<int>(rs_orders.size());
  if (K < 1) throw UsageError("the chunk-size LP needs at least one chunk");
  const int n = K * 2 * D;
  std::vector<std::vector<StageCost>> stages;
  for (const auto& order : rs_orders) stages.push_back(allreduce_stages(network, order));
  // Times are measured in units of the unpipelined all-reduce (chunk 0's stages back to back), so
  // every coefficient and bound lies in [0, 1] at any message size: in microseconds, a TiB gives
  // coefficients near 1e6 against latencies near 1, and GLPK stalls or gives up.
  double time_unit_us = 0;
  for (const StageCost& st : stages[0]) time_unit_us += st.a_us + st.b_us_per_byte * bytes;

  // Columns: x_k (fraction of the message in chunk k) 1..K, t_op K+1..K+n, C = K+n+1.
  auto x_col = [&](int k) { return 1 + k; };
  auto t_col = [&](int op) { return 1 + K + op; };
  const int c_col = K + n + 1;
  // GLPK's environment is thread-safe only when the library was built with thread-local storage;
  // serialise calls so the simulator may predict from several threads.
  static std::mutex glpk_mutex;
  std::lock_guard<std::mutex> lock(glpk_mutex);
  glp_term_out(GLP_OFF);  // the scaler and simplex report on stdout otherwise; --json owns stdout
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  glp_add_cols(lp.get(), c_col);
  for (int col = 1; col <= c_col; ++col) glp_set_col_bnds(lp.get(), col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp.get(), c_col, 1.0);

  Triplets m;
  int row = 0;
  // t_to - t_from - b*M*x_k >= a: operation `from` (of chunk k) finishes before `to` starts.
  auto add_after = [&](int from, int to_col) {
    const int k = from / (2 * D);
    const StageCost& st = stages[k][from % (2 * D)];
    row = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), row, GLP_LO, st.a_us / time_unit_us, 0.0);
    m.add(row, to_col, 1.0);
    m.add(row, t_col(from), -1.0);
    m.add(row, x_col(k), -st.b_us_per_byte * bytes / time_unit_us);
  };
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j + 1 < 2 * D; ++j) add_after(k * 2 * D + j, t_col(k * 2 * D + j + 1));
    add_after(k * 2 * D + 2 * D - 1, c_col);
  }
  if (static_cast<int>(sequences.size()) != D)
    throw UsageError("one operation sequence per dimension expected");
  for (const auto& seq : sequences)
    for (std::size_t i = 1; i < seq.size(); ++i) {
      if (seq[i - 1] < 0 || seq[i - 1] >= n || seq[i] < 0 || seq[i] >= n)
        throw UsageError("operation sequence refers to an operation that does not exist");
      add_after(seq[i - 1], t_col(seq[i]));
    }
  row = glp_add_rows(lp.get(), 1);
  glp_set_row_bnds(lp.get(), row, GLP_FX, 1.0, 1.0);
  for (int k = 0; k < K; ++k) m.add(row, x_col(k), 1.0);

  run_chunk_lp_simplex(lp.get(), m, network.name);
  return read_chunk_lp_solution(lp.get(), K, bytes, time_unit_us);
}

}  // namespace ncclbot::hipipe
