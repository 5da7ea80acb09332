#!/usr/bin/env bash
# Builds the GPU bundle: everything one run on the GPU machine needs, in one folder that travels
# there as one `carry` path and runs from whatever folder it lands in (docs/cuda.md "Running the
# GPU check"). The GPU machine has no Debian packages and no network, and nothing is built there.
#   BUNDLE/bin/             ncclbot and the gpu test programs, stripped, with every shared library
#                           they need beyond glibc and the C++ runtime copied beside them (fmt,
#                           toml++, GLPK and its dependencies, md4c); the programs are linked with
#                           RPATH=$ORIGIN (DT_RPATH, which also serves the libraries' own
#                           dependencies), so no LD_LIBRARY_PATH is set and no other program (the
#                           Python peers) sees these libraries
#   BUNDLE/share/ncclbot/   fabrics, hipipe, experiments, scripts: the installed layout, which the
#                           programs find from bin/ (io/resource_paths.hpp; cmake/install_data.cmake)
#   BUNDLE/run-gpu-tests.sh runs every gpu test program, one JSON report each (no ctest)
#   BUNDLE/MANIFEST.txt     the commit, each file's size, each program's ldd, the glibc and C++
#                           runtime versions it needs
# The build is a configure of its own in BUILD_DIR (sm_90 SASS + PTX, the RPATH above); the bundle
# holds no object, archive or path of this machine. Then a copy moved to another folder is checked:
# every program starts there, ldd finds every library inside the copy or in glibc, the programs find
# their data there, the test runner runs, no file names this machine's source or build folder, and
# the whole stays under 48 MiB.
# Usage: scripts/gpu-bundle.sh [BUNDLE_DIR [BUILD_DIR]]    (defaults: gpu-bundle, build-bundle)
set -euo pipefail

fail() {
  echo "gpu-bundle: $1" >&2
  exit "${2:-1}"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
[[ $# -le 2 ]] || fail "expected at most BUNDLE_DIR and BUILD_DIR, got $# arguments" 2
for a in "$@"; do
  [[ "$a" != -* ]] || fail "unknown option '$a' (usage: scripts/gpu-bundle.sh [BUNDLE_DIR [BUILD_DIR]])" 2
  [[ -n "$a" ]] || fail "an empty folder name" 2
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=$(realpath -m "${1:-$ROOT/gpu-bundle}")
BUILD=$(realpath -m "${2:-$ROOT/build-bundle}")
LIMIT_BYTES=$((48 * 1024 * 1024))
# The programs of the device run: the gpu tests (label gpu in tests/gpu/CMakeLists.txt) and ncclbot.
TESTS=(gpu_curand_stream_test gpu_cuda_engine_test gpu_mpi_cuda_replay_test)
# Libraries left to the machine: glibc's, which must match the machine's own loader, and the C++
# runtime (libstdc++, libgcc_s): this machine's copies need a newer glibc (2.36: arc4random) than the
# programs do (2.34), and any libstdc++ of GCC 11 or later serves the programs (GLIBCXX_3.4.29), so
# Ubuntu 22.04 and RHEL 9 run the bundle with their own.
SYSTEM_LIBS='^(linux-vdso|ld-linux[-a-z0-9_]*|libc|libm|libpthread|libdl|librt|libresolv|libutil|libstdc\+\+|libgcc_s)\.so'

# The bundle folder is replaced whole; refuse to replace anything that is not an earlier bundle.
if [[ -e "$BUNDLE" && ! -f "$BUNDLE/MANIFEST.txt" && -n "$(ls -A "$BUNDLE" 2>/dev/null)" ]]; then
  fail "$BUNDLE exists and is not a bundle (no MANIFEST.txt); not replacing it" 2
fi
case "$BUNDLE" in "$ROOT" | "$BUILD" | /) fail "refusing bundle folder $BUNDLE" 2 ;; esac

echo "gpu-bundle: configuring $BUILD (sm_90, RPATH \$ORIGIN)" >&2
mkdir -p "$BUILD"
CONFIGURE_LOG="$BUILD/gpu-bundle-configure.log"
# The install RPATH at link time: a build RPATH would get CMake's padding (`$ORIGIN:`), whose empty
# entry makes the loader search the working folder too.
# shellcheck disable=SC2016  # $ORIGIN is for the loader, not the shell
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' -DCMAKE_BUILD_RPATH= \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
  -DNCCLBOT_WITH_MPI=OFF -DNCCLBOT_PYTHON=OFF >"$CONFIGURE_LOG" 2>&1 ||
  { tail -30 "$CONFIGURE_LOG" >&2; fail "configure failed (log: $CONFIGURE_LOG)"; }
grep -q 'ncclbot: CUDA kernels ON' "$CONFIGURE_LOG" ||
  fail "CMake found no CUDA compiler (nvcc on PATH or CUDACXX); a bundle without kernels is no use"
echo "gpu-bundle: building ncclbot ${TESTS[*]}" >&2
cmake --build "$BUILD" --target ncclbot "${TESTS[@]}"

# Assemble in a fresh folder beside the bundle, then swap it in.
STAGE=$(mktemp -d "$BUNDLE.new.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/share/ncclbot/scripts"
cp "$BUILD/ncclbot" "$STAGE/bin/"
for t in "${TESTS[@]}"; do cp "$BUILD/tests/gpu/$t" "$STAGE/bin/"; done
PROGRAMS=(ncclbot "${TESTS[@]}")
# Every library a program loads, but glibc's, beside the programs under its own name (the name the
# programs ask for), from the path this machine's loader resolves it to.
for p in "${PROGRAMS[@]}"; do
  ldd "$STAGE/bin/$p" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $SYSTEM_LIBS ]] || cp -L "$path" "$STAGE/bin/$name"
done
strip --strip-all "${PROGRAMS[@]/#/$STAGE/bin/}"
find "$STAGE/bin" -name '*.so*' -exec strip --strip-unneeded {} +
# The data, as cmake/install_data.cmake installs it.
cp -r "$ROOT/data/fabrics" "$ROOT/data/hipipe" "$ROOT/experiments" "$STAGE/share/ncclbot/"
cp "$ROOT"/scripts/*.py "$STAGE/share/ncclbot/scripts/"
cp "$ROOT/scripts/run-gpu-tests.sh" "$STAGE/run-gpu-tests.sh"
chmod +x "$STAGE/run-gpu-tests.sh"

# The manifest: what was built from what, and what each program loads here.
{
  echo "ncclbot GPU bundle (scripts/gpu-bundle.sh), built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit+=" with uncommitted changes"
  echo "commit $commit"
  echo "CUDA architectures: $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
  for runtime in GLIBC GLIBCXX CXXABI; do
    echo "newest $runtime symbol version needed: $(objdump -T "${PROGRAMS[@]/#/$STAGE/bin/}" "$STAGE"/bin/*.so* \
      2>/dev/null | grep -o "${runtime}_[0-9.]*" | sort -uV | tail -1)"
  done
  echo
  echo "files (bytes):"
  (cd "$STAGE" && find . -type f -printf '%s\t%p\n' | sort -k2)
} >"$STAGE/MANIFEST.txt"

rm -rf "$BUNDLE"
mv "$STAGE" "$BUNDLE"
trap - EXIT

# --- The checks, on a copy in another folder ---------------------------------------------------
MOVED_ROOT=$(mktemp -d)
trap 'rm -rf "$MOVED_ROOT"' EXIT
MOVED="$MOVED_ROOT/elsewhere/$(basename "$BUNDLE")"
mkdir -p "$(dirname "$MOVED")"
cp -a "$BUNDLE" "$MOVED"
problems=()
# No LD_LIBRARY_PATH, no NCCLBOT_* variable: only what travels with the bundle.
clean_env=(env -u LD_LIBRARY_PATH -u NCCLBOT_BINARY -u NCCLBOT_DATA_DIR -u NCCLBOT_HIPIPE_FABRICS)

echo "gpu-bundle: sizes and libraries (ldd of the moved copy):"
{
  echo
  echo "ldd of each program (on the build machine, from a moved copy):"
} >>"$BUNDLE/MANIFEST.txt"
for p in "${PROGRAMS[@]}"; do
  bin="$MOVED/bin/$p"
  printf '%-28s %6s MiB\n' "$p" "$(mib "$(stat -c %s "$bin")")"
  listing=$("${clean_env[@]}" ldd "$bin" 2>&1)
  sed 's/^/    /' <<<"$listing"
  { echo "$p:"; sed "s|$MOVED|BUNDLE|g; s/^/    /" <<<"$listing"; } >>"$BUNDLE/MANIFEST.txt"
  if grep -q "not found" <<<"$listing"; then problems+=("$p: a library is not found"); fi
  while read -r name path; do
    [[ "$name" =~ $SYSTEM_LIBS || "$path" == "$MOVED/bin/"* ]] ||
      problems+=("$p: $name loads from $path, outside the bundle")
  done < <(awk '$2 == "=>" {print $1, $3}' <<<"$listing")
done
for lib in "$MOVED"/bin/*.so*; do
  printf '%-28s %6s MiB\n' "$(basename "$lib")" "$(mib "$(stat -c %s "$lib")")"
done

# Every program searches exactly its own folder (DT_RPATH, not RUNPATH, which would not serve the
# libraries' own dependencies; no empty entry, which would mean the working folder).
for p in "${PROGRAMS[@]}"; do
  rpath=$(readelf -d "$MOVED/bin/$p" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p')
  [[ "$rpath" == 'RPATH $ORIGIN' ]] || problems+=("$p: the library search path is '$rpath', not RPATH \$ORIGIN")
done
# Every program starts from the moved copy.
"${clean_env[@]}" "$MOVED/bin/ncclbot" --help >/dev/null 2>&1 || problems+=("ncclbot --help fails in the moved copy")
for t in "${TESTS[@]}"; do
  listed=$("${clean_env[@]}" "$MOVED/bin/$t" --gtest_list_tests 2>&1) || problems+=("$t --gtest_list_tests fails")
  grep -q '^  ' <<<"$listed" || problems+=("$t lists no tests")
done
# The program finds its data in the moved copy: a fabric preset, by name.
work="$MOVED_ROOT/work"
mkdir -p "$work"
(cd "$work" && "${clean_env[@]}" "$MOVED/bin/ncclbot" synth --fabric h100-roce --nodes 2 --samples 2 \
  --out "$work/s.csv" >/dev/null 2>"$work/synth.err") ||
  problems+=("ncclbot synth --fabric h100-roce fails in the moved copy: $(tail -1 "$work/synth.err")")
# The runner runs every test program (here, without a GPU, their tests skip) and reports each.
if (cd "$work" && "${clean_env[@]}" "$MOVED/run-gpu-tests.sh" "$work/reports" 120 >"$work/runner.log" 2>&1); then
  for t in "${TESTS[@]}"; do
    [[ -s "$work/reports/$t.json" ]] || problems+=("run-gpu-tests.sh wrote no report for $t")
  done
else
  sed 's/^/    /' "$work/runner.log" >&2
  problems+=("run-gpu-tests.sh fails in the moved copy")
fi
# No path of this machine's source or build folder in any file.
for dir in "$ROOT" "$BUILD"; do
  hits=$({ grep -rlF "$dir" "$BUNDLE" 2>/dev/null || true; } | sed "s|$BUNDLE/||" | tr '\n' ' ')
  [[ -z "$hits" ]] || problems+=("$dir is named in: $hits")
done
bytes=$(du -sb "$BUNDLE" | cut -f1)
((bytes < LIMIT_BYTES)) || problems+=("the bundle is $bytes bytes, not under 48 MiB")

printf 'gpu-bundle: %s: %s MiB in %d files\n' "$BUNDLE" "$(mib "$bytes")" \
  "$(find "$BUNDLE" -type f | wc -l)"
if ((${#problems[@]})); then
  printf 'gpu-bundle: FAILED: %s\n' "${problems[@]}" >&2
  exit 1
fi
needs=$(grep -h '^newest' "$BUNDLE/MANIFEST.txt" | sed 's/.*: //' | paste -sd ' ')
echo "gpu-bundle: the moved copy passed: every program starts, every library is inside it or the" \
  "system's (glibc, libstdc++, libgcc_s; $needs), it finds its data, the test runner reports every" \
  "program, no path of this machine" >&2
here=$(realpath --relative-to="$ROOT" "$BUNDLE")
echo "gpu-bundle: carry it as [\"$here\"] and run: bash scripts/gpu-check.sh $here (docs/cuda.md)" >&2
