#!/usr/bin/env python3
"""Static SASS structure of a replay kernel: its size, and every loop (backward branch) with its
static instruction count, nested loops indented. docs/cuda.md derives the instructions per policy
step from these numbers; scripts/gpu-check.sh measures the same on a GPU with Nsight Compute when
`ncu` is there.

Usage (cuobjdump from the CUDA toolkit, or `pip install nvidia-cuda-cuobjdump`):
  cuobjdump -sass BUILD/CMakeFiles/ncclbot_kernels.dir/kernels/replay_slots.cu.o | scripts/sass_loops.py Ucb1Policy
"""
import re
import sys


def functions(text):
    """{name: [(address, instruction)]} of every function in cuobjdump -sass output."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and name:
            out[name].append((int(m.group(1), 16), m.group(2)))
    return out


def loops(ins):
    """(head, tail, static size) of every backward branch, outermost first."""
    found = []
    for addr, text in ins:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) <= addr:
            head = int(m.group(1), 16)
            found.append((head, addr, sum(1 for a, _ in ins if head <= a <= addr)))
    return sorted(found, key=lambda l: (l[0], -l[1]))


def main():
    want = sys.argv[1] if len(sys.argv) > 1 else "Ucb1Policy"
    for name, ins in functions(sys.stdin.read()).items():
        if "replay_kernel" not in name or want not in name:
            continue
        print(f"{name}\n  {len(ins)} instructions")
        stack = []
        for head, tail, size in loops(ins):
            while stack and not (stack[-1][0] <= head and tail <= stack[-1][1]):
                stack.pop()
            print(f"  {'  ' * len(stack)}loop {head:#06x}-{tail:#06x}: {size} instructions")
            stack.append((head, tail))


if __name__ == "__main__":
    main()
