#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang (address + undefined sanitizers) in
# build-fuzz/ and runs each for FUZZ_SECONDS (default 30) on a copy of its checked-in corpus.
# New crashes are left in build-fuzz/crashes/<format>/; copy one into tests/fuzz/corpus/<format>/
# once fixed, so that ctest keeps checking it (tests/io/corpus_test.cc).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-30}
jobs=${JOBS:-$(nproc)}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DTENSORKIT_FUZZ=ON -DTENSORKIT_CUDA=OFF \
  -DTENSORKIT_BUILD_TESTS=OFF -DTENSORKIT_BUILD_BENCH=OFF -DTENSORKIT_BUILD_TOOLS=OFF >/dev/null
targets=()
for src in "$root"/tests/fuzz/fuzz_*.cc; do
  targets+=("$(basename "$src" .cc)")
done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
status=0
for t in "${targets[@]}"; do
  fmt=${t#fuzz_}
  work="$build/corpus/$fmt"
  crashes="$build/crashes/$fmt"
  mkdir -p "$work" "$crashes"
  if [ -d "$root/tests/fuzz/corpus/$fmt" ]; then cp -n "$root/tests/fuzz/corpus/$fmt"/* "$work"/ 2>/dev/null || true; fi
  echo "== $t for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 TENSORKIT_NUM_THREADS=1 \
      "$build/bin/$t" "$work" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
      -artifact_prefix="$crashes/" -print_final_stats=1 2>"$build/$t.log"; then
    echo "FAILED: $t (see $build/$t.log and $crashes/)"
    tail -40 "$build/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/$t.log" | tail -2
  fi
done
exit $status
