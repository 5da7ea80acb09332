#!/usr/bin/env bash
# A stand-in for srun / mpirun in the campaign end-to-end test: it reads the geometry the way the
# real launchers are called by run.sh (srun --nodes=N --ntasks-per-node=G ...; mpirun -np P
# --map-by ppr:G:node -x VAR ...), exports what an OpenMPI-launched rank sees
# (OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE) and runs the program once, as rank 0 (the
# only rank nccl-tests prints from).
set -euo pipefail
nodes="" per_node="" procs=""
while (($# > 0)); do
  case "$1" in
    --nodes=*) nodes="${1#--nodes=}" ;;
    -N) nodes="$2"; shift ;;
    --ntasks-per-node=*) per_node="${1#--ntasks-per-node=}" ;;
    --gpus-per-node=* | --export=*) ;;
    -np | -n) procs="$2"; shift ;;
    --map-by)
      [[ "$2" =~ ^ppr:([0-9]+):node$ ]] || { echo "standin launcher: --map-by $2 unsupported" >&2; exit 2; }
      per_node="${BASH_REMATCH[1]}"
      shift
      ;;
    -x) shift ;;
    -*) echo "standin launcher: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[[ -n "$per_node" && (-n "$nodes" || -n "$procs") && $# -gt 0 ]] || { echo "standin launcher: no geometry or command" >&2; exit 2; }
[[ -n "$procs" ]] || procs=$((nodes * per_node))
export OMPI_COMM_WORLD_SIZE="$procs" OMPI_COMM_WORLD_LOCAL_SIZE="$per_node"
exec "$@"
