#!/usr/bin/env bash
# Runs a GPU bundle (made by `make gpu-bundle`) on a machine with an NVIDIA GPU and CUDA 13:
# the GPU tests, the tests once more under compute-sanitizer memcheck where it works, then the
# GPU benchmarks, and prints one table. Needs nothing from a package registry; cuBLAS and
# cuSPARSE come from this machine's CUDA 13 (a toolkit under /usr/local/cuda*, or the pip
# wheels of a PyTorch installation). Exit status: 0 when every step passed, 1 otherwise,
# 2 when the bundle or a device is missing.
#
#   scripts/gpu-check.sh BUNDLE_DIR
set -u
BUNDLE=${1:-}
# The bundle's programs and libraries come packed (payload.tar.xz); unpack them once, beside the
# payload or, where that folder is read-only, under TMPDIR. xz, or Python's lzma where xz is
# missing.
if [[ -n "$BUNDLE" && -f "$BUNDLE/payload.tar.xz" && ! -x "$BUNDLE/bin/tensorkit_gpu_tests" ]]; then
  dest=$BUNDLE
  if ! touch "$BUNDLE/.unpack-probe" 2>/dev/null; then
    dest=$(mktemp -d "${TMPDIR:-/tmp}/tensorkit-gpu-bundle.XXXXXX")
    cp "$BUNDLE/gpu-check.sh" "$dest/" 2>/dev/null || true
  fi
  rm -f "$BUNDLE/.unpack-probe"
  echo "gpu-check: unpacking $BUNDLE/payload.tar.xz into $dest"
  if command -v xz >/dev/null; then
    xz -dc "$BUNDLE/payload.tar.xz" | tar -C "$dest" -xf -
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
      "$BUNDLE/payload.tar.xz" | tar -C "$dest" -xf -
  fi || { echo "gpu-check: FAILED: could not unpack the payload (needs tar and xz or python3)" >&2; exit 2; }
  BUNDLE=$dest
fi
if [[ -z "$BUNDLE" || ! -x "$BUNDLE/bin/tensorkit_gpu_tests" ]]; then
  echo "usage: scripts/gpu-check.sh BUNDLE_DIR (a folder made by 'make gpu-bundle')" >&2
  exit 2
fi
BUNDLE=$(cd "$BUNDLE" && pwd)
START=$(date +%s)
# The whole check stays within 8 minutes: each step gets what is left, within its own cap.
DEADLINE=$((START + ${TENSORKIT_GPU_CHECK_SECONDS:-470}))
left() { echo $((DEADLINE - $(date +%s))); }

# --- CUDA libraries of this machine ---------------------------------------------------------
# tensorkit loads cuBLAS and cuSPARSE on first use; cuSPARSE needs nvJitLink and cuBLAS cublasLt.
# Each is looked for in the toolkit folders, the system's, and the cu13 pip wheels (nvidia/*/lib
# of every site-packages, PyTorch's included); the folders holding them go on the library path and
# each one is reported, found or missing (the GPU tests and rows that need a missing one fail or
# say why; the rest still run).
NEEDED=(libcublas.so.13 libcublasLt.so.13 libcusparse.so.12 libnvJitLink.so.13)
candidates=()
for d in ${CUDA_HOME:+$CUDA_HOME/lib64} /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 \
         /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/targets/x86_64-linux/lib \
         /usr/lib/x86_64-linux-gnu /usr/lib64; do
  [[ -d "$d" ]] && candidates+=("$d")
done
find_wheel_dirs='
import glob, os, site, sys
roots = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
for r in dict.fromkeys(roots):
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))):
        print(d)
'
if command -v python3 >/dev/null; then
  while read -r d; do [[ -n "$d" ]] && candidates+=("$d"); done < <(python3 -c "$find_wheel_dirs" 2>/dev/null)
fi
for d in /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/lib/python3*/dist-packages/nvidia/*/lib \
         /opt/conda/lib/python3*/site-packages/nvidia/*/lib; do
  [[ -d "$d" ]] && candidates+=("$d")
done
libdirs=()
declare -A lib_found
for lib in "${NEEDED[@]}"; do
  for d in "${candidates[@]}"; do
    if [[ -e "$d/$lib" ]]; then
      lib_found[$lib]="$d"
      libdirs+=("$d")
      break
    fi
  done
done
joined=$(printf "%s\n" "${libdirs[@]:-}" | awk "NF && !seen[\$0]++" | paste -sd:)
export LD_LIBRARY_PATH="$BUNDLE/lib${joined:+:$joined}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "gpu-check: bundle $BUNDLE"
missing_libs=()
for lib in "${NEEDED[@]}"; do
  if [[ -n "${lib_found[$lib]:-}" ]]; then
    echo "gpu-check: $lib from ${lib_found[$lib]}"
  elif ldconfig -p 2>/dev/null | grep -q "$lib "; then
    echo "gpu-check: $lib from the loader's cache (ldconfig)"
  else
    echo "gpu-check: $lib MISSING: not in the CUDA toolkit folders, the system's, or any nvidia/*/lib of a Python site-packages; set CUDA_HOME or LD_LIBRARY_PATH to its folder" >&2
    missing_libs+=("$lib")
  fi
done

# The bundled programs run with this machine's C library when it is recent enough, otherwise
# through the bundled loader and C library.
run() {
  if [[ -n "${LOADER:-}" ]]; then
    "$LOADER" --library-path "$(dirname "$LOADER"):$LD_LIBRARY_PATH" "$@"
  else
    "$@"
  fi
}
LOADER=
probe=$("$BUNDLE/bin/tensorkit_gpu_tests" --gtest_list_tests 2>&1 >/dev/null)
if grep -q "GLIBC" <<<"$probe" && [[ -x "$BUNDLE/glibc/ld-linux-x86-64.so.2" ]]; then
  LOADER="$BUNDLE/glibc/ld-linux-x86-64.so.2"
  echo "gpu-check: this machine's C library is older than the bundle's; using the bundled one"
elif [[ -n "$probe" ]] && ! "$BUNDLE/bin/tensorkit_gpu_tests" --gtest_list_tests >/dev/null 2>&1; then
  echo "gpu-check: the test program does not start here:" >&2
  echo "$probe" >&2
  exit 2
fi

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/gpu-check: GPU /'
fi
devices=$(run "$BUNDLE/bin/tensorkit_gpu_tests" --gtest_filter='GpuDeviceTest.*' 2>&1 | grep -c "SKIPPED \]" || true)
if [[ "$devices" != "0" ]]; then
  echo "gpu-check: FAILED: no CUDA device is visible to the bundle (the GPU tests skip); nothing to check" >&2
  exit 2
fi

status=0
declare -A results

# --- 1. the GPU tests -------------------------------------------------------------------------
echo "=== GPU tests ==="
t0=$(date +%s)
if timeout $(( $(left) < 150 ? $(left) : 150 )) bash -c "$(declare -f run); LOADER='$LOADER' run '$BUNDLE/bin/tensorkit_gpu_tests' --gtest_brief=1" ; then
  results[tests]="passed ($(( $(date +%s) - t0 )) s)"
else
  results[tests]="FAILED"
  status=1
fi

# --- 2. the same tests under compute-sanitizer memcheck ----------------------------------------
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "=== compute-sanitizer memcheck ==="
if [[ -z "$SAN" ]]; then
  results[memcheck]="skipped: no compute-sanitizer on this machine"
else
  t0=$(date +%s)
  budget=$(( $(left) - 200 ))  # keep time for the benchmarks
  (( budget > 180 )) && budget=180
  if (( budget < 30 )); then
    results[memcheck]="skipped: not enough time left"
  else
    san_cmd=("$SAN" --tool memcheck --error-exitcode 3 --leak-check no)
    if [[ -n "$LOADER" ]]; then
      san_cmd+=("$LOADER" --library-path "$BUNDLE/glibc:$LD_LIBRARY_PATH")
    fi
    timeout "$budget" "${san_cmd[@]}" "$BUNDLE/bin/tensorkit_gpu_tests" --gtest_brief=1 \
      > "$BUNDLE/memcheck.log" 2>&1
    rc=$?
    tail -5 "$BUNDLE/memcheck.log"
    if (( rc == 0 )); then
      results[memcheck]="passed ($(( $(date +%s) - t0 )) s)"
    elif (( rc == 124 )); then
      results[memcheck]="incomplete: stopped after ${budget} s (see memcheck.log)"
    elif grep -q "Target application returned an error\|ERROR SUMMARY: [1-9]" "$BUNDLE/memcheck.log"; then
      results[memcheck]="FAILED (see memcheck.log)"
      status=1
    else
      results[memcheck]="skipped: compute-sanitizer does not run here (rc $rc, see memcheck.log)"
    fi
  fi
fi

# --- 3. the GPU benchmarks: one program, dense and sparse (bench/gpu_bench.cc, bench/gpu/) -------
echo "=== GPU benchmarks ==="
json="$BUNDLE/bench_gpu.json"
if timeout $(( $(left) > 20 ? $(left) - 10 : 10 )) bash -c "$(declare -f run); LOADER='$LOADER' run '$BUNDLE/bin/bench_gpu' --device cuda --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=console --benchmark_out='$json' --benchmark_out_format=json"; then
  results[bench]="ran"
else
  results[bench]="FAILED"
  status=1
fi

# --- the table ----------------------------------------------------------------------------------
echo
echo "=== tensorkit GPU check: $(( $(date +%s) - START )) s ==="
printf '%-34s %s\n' "GPU tests" "${results[tests]}" "memcheck" "${results[memcheck]}" \
  "benchmarks" "${results[bench]}" \
  "CUDA libraries" "${missing_libs[*]:+MISSING ${missing_libs[*]}}${missing_libs[*]:-all found}"
if [[ -s "$json" ]] && command -v python3 >/dev/null; then
  python3 - "$json" <<'PY'
import json, os, sys
records = [b for f in sys.argv[1:] if os.path.exists(f) and os.path.getsize(f) > 0
           for b in json.load(open(f))["benchmarks"]]
runs = [b for b in records if b.get("aggregate_name") == "median"]
by = {b["run_name"]: b for b in runs}
# A row that could not run (a library that does not load, say) says why instead of vanishing.
errors = {}
for b in records:
    if b.get("error_occurred"):
        errors.setdefault(b.get("run_name", b["name"]), b.get("error_message", "error"))
print()
print(f"{'benchmark (median of 3)':46} {'time':>12} {'GB/s':>9} {'of peak':>8} {'TFLOP/s':>9}")
for b in runs:
    t = f"{b['real_time']:.1f} {b['time_unit']}"
    gbs = f"{b['GB/s']:.0f}" if "GB/s" in b else ""
    frac = f"{100 * b['peak_frac']:.0f}%" if "peak_frac" in b else ""
    tf = f"{b['TFLOP/s']:.1f}" if "TFLOP/s" in b else ""
    print(f"{b['run_name'] + ' ' + b.get('label', ''):46} {t:>12} {gbs:>9} {frac:>8} {tf:>9}")
for name, why in errors.items():
    print(f"{name:46} not run: {why}")
print()

def ratio(ours_name, raw_name, text):
    ours, raw = by.get(ours_name), by.get(raw_name)
    if ours and raw:
        print(f"{text} = {ours['real_time'] / raw['real_time']:.3f}")
    else:
        gone = [n for n in (ours_name, raw_name) if n not in by]
        why = "; ".join(dict.fromkeys(errors.get(n, "no result") for n in gone))
        print(f"{text}: not measured ({', '.join(gone)}: {why})")

m = "/manual_time"
ratio("BM_GpuCopy" + m, "BM_GpuRawMemcpy" + m,
      "Copy [16384, 16384] float32: tensorkit Copy / cudaMemcpyAsync time")
for arg, name in (("8", "float32"), ("7", "bfloat16")):
    ratio(f"BM_GpuGemmAddProduct/{arg}" + m, f"BM_GpuGemmRawCublas/{arg}" + m,
          f"GEMM 8192^3 {name}: AddProduct / raw cublasGemmEx time")
ratio("BM_SpmvTensorkit" + m, "BM_SpmvRawCusparse" + m,
      "SPMV [10M x 1M], 100M nnz: SparseDenseProduct / raw cusparseSpMV time")
ratio("BM_SpmmTensorkit" + m, "BM_SpmmRawCusparse/0" + m,
      "SPMM N=64 [10M x 1M], 100M nnz: SparseDenseProduct / raw cusparseSpMM alone")
ratio("BM_SpmmTensorkit" + m, "BM_SpmmRawCusparse/1" + m,
      "SPMM N=64 [10M x 1M], 100M nnz: SparseDenseProduct / raw cudaMemsetAsync + cusparseSpMM")
# Elementwise and reduction kernels against the memory system: the fraction of the device's peak
# bandwidth (bus width x clock) and of what cudaMemcpyAsync itself reaches.
memcpy = by.get("BM_GpuRawMemcpy" + m)
for name, text in (("BM_GpuCopy", "Copy"), ("BM_GpuBroadcastAdd", "broadcast Add"),
                   ("BM_GpuExp", "Exp"), ("BM_GpuTransposeCopy", "transposed Copy"),
                   ("BM_GpuSumAxis/0", "sum over axis 0"), ("BM_GpuSumAxis/1", "sum over axis 1")):
    b = by.get(name + m)
    if b and "GB/s" in b:
        of_memcpy = f", {b['GB/s'] / memcpy['GB/s']:.3f} of cudaMemcpyAsync's GB/s" if memcpy else ""
        print(f"{text} [16384, 16384] float32: {b['GB/s']:.0f} GB/s = {b['peak_frac']:.3f} of peak{of_memcpy}")
    else:
        print(f"{text}: not measured ({errors.get(name + m, 'no result')})")
# The feature layer's bags against the memory system (goal: 65% of peak, about what FBGEMM's
# table-batched forward reaches).
for name, text in (("BM_GpuEmbeddingBag/0", "EmbeddingBag sum, 64k bags of ~40 ids"),
                   ("BM_GpuEmbeddingBag/1", "EmbeddingBag mean, 64k bags of ~40 ids"),
                   ("BM_GpuEmbeddingBags", "EmbeddingBags, 8 tables"),
                   ("BM_GpuSparseSegmentReduce/0", "SparseSegmentSum, 5M rows into 64k segments"),
                   ("BM_GpuSparseSegmentReduce/1", "SparseSegmentMean, 5M rows into 64k segments")):
    b = by.get(name + m)
    if b and "GB/s" in b:
        print(f"{text} of [1M, 64] float32: {b['GB/s']:.0f} GB/s = {b['peak_frac']:.3f} of peak (goal 0.65)")
    else:
        print(f"{text}: not measured ({errors.get(name + m, 'no result')})")
for b in runs:
    if "vs_raw_sort" in b:
        print(f"Reorder of 100M entries: raw SortPairs time / Reorder time = {b['vs_raw_sort']:.3f}")
PY
fi
exit $status
