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
inc="$work/prefix/include/tensorkit"
# The rule of the top CMakeLists.txt: a header whose first comment paragraph (the lines up to
# one that is only "//") calls it internal is not installed.
is_internal() {
  case "$(basename "$1")" in internal.h | *_internal.h) return 0 ;; esac
  awk '/^\/\/ *$/ {exit} /^\/\// {printf "%s ", $0; next} {exit}' "$1" |
    grep -Eq '[Ii]nternal[^/._a-z]|not a public|not part of the public'
}
# Headers known to be internal: each exists in the source tree and says so, and none is
# installed (a name here that no longer exists fails the test rather than proving nothing).
known="common/cpu_memory.h common/simd_path.h common/streaming.h dense/engine.h
  dense/executor.h dense/functors.h dense/ops_internal.h dense/simd_math.h
  dense/transpose_internal.h common/file_util.h io/formats.h io/text.h sparse/internal.h
  features/hash_device.h features/device_ops.h"
for h in $known; do
  test -f "$src_dir/$h" || { echo "listed internal header $h does not exist" >&2; exit 1; }
  is_internal "$src_dir/$h" || { echo "$h does not say it is internal" >&2; exit 1; }
  if test -e "$inc/$h"; then
    echo "internal header $h was installed" >&2
    exit 1
  fi
done
# Every other header: installed exactly when it does not say it is internal.
for dir in common dense sparse io; do
  for f in "$src_dir/$dir"/*.h; do
    h="$dir/$(basename "$f")"
    if is_internal "$f"; then
      if test -e "$inc/$h"; then echo "internal header $h was installed" >&2; exit 1; fi
    elif ! test -f "$inc/$h"; then
      echo "public header $h was not installed" >&2
      exit 1
    fi
  done
done
# Installed headers include only installed headers.
for f in $(find "$inc" -name '*.h'); do
  for dep in $(sed -n 's|^#include "tensorkit/\(.*\)"|\1|p' "$f"); do
    if ! test -f "$inc/$dep"; then
      echo "installed ${f#"$inc/"} includes $dep, which is not installed" >&2
      exit 1
    fi
  done
done
cmake -S "$src_dir/tests/install/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
"$work/build/consumer"
echo "consumer built and ran against the install tree"
