#!/usr/bin/env python3
"""Reference optimum of HiPIPE's chunk-size LP for one small case, solved with SciPy's HiGHS
(independently of the GLPK build in src/hipipe/lp_chunk_sizes.cpp). tests/hipipe/lp_test.cpp
hard-codes the numbers this prints.

Command: python3 scripts/hipipe_lp_reference.py

Case: D = 2 dimensions, K = 3 chunks, message M = 64 MiB, innermost-first order for every chunk.
  dim 0: p = 4, alpha = 2 us,  B = 100 GB/s
  dim 1: p = 2, alpha = 10 us, B = 20 GB/s
Stage j of a chunk of s bytes lasts a_j + b_j s with a = (p-1) alpha and
b = (p-1)/p / (B * 1e3 us^-1 per GB/s) / prod(p of dimensions already reduce-scattered).
Per-dimension service sequences (ops named (chunk, step); steps RS0, RS1, AG1, AG0):
  dim 0: (0,0) (1,0) (2,0) (0,3) (1,3) (2,3)
  dim 1: (0,1) (0,2) (1,1) (1,2) (2,1) (2,2)
"""
import numpy as np
from scipy.optimize import linprog

M = 64 * 2**20
dims = [(4, 2.0, 100.0), (2, 10.0, 20.0)]
K, D = 3, 2
stages = []  # (dim, a, b) for steps 0..2D-1
shrink = 1.0
rs = []
for d, (p, alpha, bw) in enumerate(dims):
    rs.append((d, (p - 1) * alpha, (p - 1) / p / (bw * 1e3) / shrink))
    shrink *= p
stages = rs + list(reversed(rs))

seq = {0: [(0, 0), (1, 0), (2, 0), (0, 3), (1, 3), (2, 3)],
       1: [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]}

n_ops = K * 2 * D
nvar = K + n_ops + 1  # x_k (fraction of M), t_op, C
def x(k): return k
def t(k, j): return K + k * 2 * D + j
C = nvar - 1

A, rhs = [], []
def after(k, j, to_index):
    # t_to - t_(k,j) - b M x_k >= a  ->  -t_to + t_kj + b M x_k <= -a
    d, a, b = stages[j]
    row = np.zeros(nvar)
    row[to_index] -= 1
    row[t(k, j)] += 1
    row[x(k)] += b * M
    A.append(row)
    rhs.append(-a)

for k in range(K):
    for j in range(2 * D - 1):
        after(k, j, t(k, j + 1))
    after(k, 2 * D - 1, C)
for d, ops in seq.items():
    for (k0, j0), (k1, j1) in zip(ops, ops[1:]):
        after(k0, j0, t(k1, j1))
Aeq = np.zeros((1, nvar)); Aeq[0, :K] = 1
c = np.zeros(nvar); c[C] = 1
res = linprog(c, A_ub=np.array(A), b_ub=np.array(rhs), A_eq=Aeq, b_eq=[1.0],
              bounds=[(0, None)] * nvar, method="highs")
assert res.status == 0, res.message
print(f"makespan_us {res.fun:.9f}")
print("chunk_bytes " + " ".join(f"{v * M:.6f}" for v in res.x[:K]))
