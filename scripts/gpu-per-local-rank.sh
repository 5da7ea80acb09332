#!/bin/sh
# One GPU per rank on multi-GPU nodes under plain mpirun: rank k of a node sees only GPU k, as
# CUDA device 0. (Under Slurm, `srun --gpus-per-task=1` does this itself.) Usage:
#   mpirun -np 8 scripts/gpu-per-local-rank.sh ncclbot-mpi replay --backend cuda ...
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
  export CUDA_VISIBLE_DEVICES="$local_rank"
fi
exec "$@"
