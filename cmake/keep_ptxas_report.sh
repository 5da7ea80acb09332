#!/bin/sh
# Compiler launcher of the CUDA kernels: runs the compile command given as arguments (ccache first,
# when the build uses it), keeps what ptxas reported (`-Xptxas -v`: registers, stack frames, spills)
# beside the object as OBJECT.ptxas.txt, and shows every other line of the compiler's output. The
# kernel-frames test reads that report, so the kernels are compiled once, not once more for the check.
set -u
object=
previous=
for arg in "$@"; do
  [ "$previous" = "-o" ] && object=$arg
  previous=$arg
done
log=$(mktemp) || exit 1
"$@" 2>"$log"
status=$?
if [ -n "$object" ] && [ $status -eq 0 ]; then
  grep -E '^ptxas info|^    [0-9]+ bytes stack frame' "$log" >"$object.ptxas.txt.part" && mv "$object.ptxas.txt.part" "$object.ptxas.txt" ||
    rm -f "$object.ptxas.txt.part" "$object.ptxas.txt"
fi
grep -vE '^ptxas info|^    [0-9]+ bytes stack frame' "$log" >&2
rm -f "$log"
exit $status
