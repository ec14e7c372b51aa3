#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a consumer.
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/tensorkit/tensorkit.h"
test -f "$work/prefix/include/tensorkit/dense/tensor.h"
# Internal headers stay out of the install tree.
for h in common/backend_cuda.h common/cpu_memory.h sparse/internal.h dense/ops_internal.h; do
  if test -e "$work/prefix/include/tensorkit/$h"; then
    echo "internal header $h was installed" >&2
    exit 1
  fi
done
cmake -S "$src_dir/tests/install/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
"$work/build/consumer"
echo "consumer built and ran against the install tree"
