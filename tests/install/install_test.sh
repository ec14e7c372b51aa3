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
cmake -S "$src_dir/tests/install/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
"$work/build/consumer"
echo "consumer built and ran against the install tree"
