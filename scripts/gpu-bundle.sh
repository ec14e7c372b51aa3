#!/usr/bin/env bash
# Builds the GPU bundle on a machine without a GPU: a self-contained folder (at most 60 MiB)
# that scripts/gpu-check.sh runs on a GPU machine which can install nothing.
#   bin/   the GPU tests and benchmarks (sm_90 code), tensorkit and the CUDA runtime linked in
#          statically, an $ORIGIN/../lib run path
#   lib/   the non-CUDA shared libraries they need (oneTBB, BLIS, Google Benchmark, the C++
#          runtime); cuBLAS and cuSPARSE are the GPU machine's own (CUDA 13)
#   glibc/ this machine's loader and C library, used by gpu-check.sh only when the GPU
#          machine's C library is older than the one the programs were linked against
#   gpu-check.sh
# bin/, lib/ and glibc/ travel as one payload.tar.xz (GraphBLAS alone is 179 MB unpacked, 23 MB
# packed), which gpu-check.sh unpacks on first use.
# Usage: scripts/gpu-bundle.sh [OUT_DIR] (default gpu-bundle). Builds in BUILD (default
# build-gpu) with SASS for sm_90 only: the PTX of the default build would double the kernels'
# size, and two programs would no longer fit in the limit. JOBS from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-gpu-bundle}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-2}
MAX_MIB=60

command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || {
  echo "gpu-bundle: nvcc not found; the bundle needs the CUDA toolkit to build" >&2
  exit 1
}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTENSORKIT_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90-real -DTENSORKIT_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target tensorkit_gpu_tests bench_gpu

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/glibc"
for exe in tensorkit_gpu_tests bench_gpu; do
  strip --strip-unneeded -o "$OUT/bin/$exe" "$BUILD/bin/$exe"
done
cp scripts/gpu-check.sh "$OUT/"

# Shared libraries: the GPU machine's CUDA libraries stay out, the C library goes to glibc/.
for exe in "$OUT"/bin/*; do ldd "$exe"; done | awk '/=> \// {print $3} /^\s*\/lib.*ld-linux/ {print $1}' |
  sort -u | while read -r lib; do
    name=$(basename "$lib")
    case "$name" in
      libcublas*|libcusparse*|libnvJitLink*|libcuda.so*|libcudart*) ;;
      ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*) cp -L "$lib" "$OUT/glibc/" ;;
      *) cp -L "$lib" "$OUT/lib/" ;;
    esac
  done
[[ -e "$OUT/glibc/ld-linux-x86-64.so.2" ]] || cp -L /lib64/ld-linux-x86-64.so.2 "$OUT/glibc/"

# Self-contained: with lib/ first on the path, as gpu-check.sh runs them, nothing but CUDA
# libraries and the C library may come from outside.
lib_dir=$(cd "$OUT/lib" && pwd)
missing=$(for exe in "$OUT"/bin/*; do LD_LIBRARY_PATH="$lib_dir" ldd "$exe"; done |
  awk '/=> \// {print $3}' | xargs -r realpath | sort -u | grep -v "^$lib_dir/" |
  grep -Ev '/(libcublas|libcublasLt|libcusparse|libnvJitLink|libc|libm|libdl|libpthread|librt)\.so' ||
  true)
if [[ -n "$missing" ]]; then
  echo "gpu-bundle: FAILED: libraries from outside the bundle: $missing" >&2
  exit 1
fi
echo "gpu-bundle: unpacked:"
du -sh "$OUT"/bin/* "$OUT"/lib "$OUT"/glibc | sed 's/^/  /'
tar -C "$OUT" -cf - bin lib glibc | xz -6 -T"$JOBS" >"$OUT/payload.tar.xz"
rm -rf "$OUT/bin" "$OUT/lib" "$OUT/glibc"
mib=$(( ($(du -sb "$OUT" | cut -f1) + 1048575) / 1048576 ))
echo "gpu-bundle: $OUT is ${mib} MiB packed (limit ${MAX_MIB} MiB)"
if (( mib > MAX_MIB )); then
  echo "gpu-bundle: FAILED: larger than ${MAX_MIB} MiB" >&2
  exit 1
fi
