#!/usr/bin/env bash
# The main job on the bundled sample data (what `make run` shows): the quickstart program, then
# the tensorkit tool converting every sample file in examples/data/ in one parallel batch,
# validating and describing the results.
set -euo pipefail
bin=${1:-build/bin}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$bin/example_quickstart"
echo
echo "== a feature pipeline: keyed jagged features, empty rows filled, table-batched embedding bags, the gradient"
"$bin/example_feature_pipeline"

tk="$bin/tensorkit"
out=$(mktemp -d "${TMPDIR:-/tmp}/tensorkit-run.XXXXXX")
trap 'rm -rf "$out"' EXIT

echo
echo "== tensorkit convert: every sample file to .npz (dense stays dense, sparse becomes scipy COO)"
"$tk" convert --to npz -o "$out/npz" "$here"/data/*.np? "$here"/data/*.mtx
echo
echo "== the sparse samples to Matrix Market, sorted (--reorder)"
"$tk" convert --reorder --to mtx -o "$out/mtx" "$here"/data/*.mtx "$here"/data/features_*.npz
echo
echo "== N-dimensional: the FROSTT tensor to a dense .npy, a dense .npy to FROSTT nonzeros"
"$tk" convert --to npy -o "$out/nd" "$here"/data/ratings.tns
"$tk" convert --to tns -o "$out/nd" "$here"/data/grid_fortran.npy
echo
echo "== validate every output (a repeated coordinate is valid in every sparse format: it counts as its sum)"
valid=0
invalid=0
for f in "$out"/npz/* "$out"/mtx/* "$out"/nd/*; do
  if "$tk" validate "$f" >/dev/null; then
    valid=$((valid + 1))
  else
    invalid=$((invalid + 1))
    "$tk" validate "$f" || true
  fi
done
echo "valid: $valid, invalid: $invalid"
"$tk" validate "$out/npz/rmat_graph.npz"
echo
echo "== canonical data: --strict refuses repeated coordinates, convert --coalesce sums them"
if strict=$("$tk" validate --strict "$out/mtx/rmat_graph.mtx"); then
  echo "validate --strict accepted the repeated coordinates of rmat_graph.mtx"
  exit 1
fi
echo "refused, as expected: ${strict#invalid: }"
"$tk" convert --coalesce "$here/data/rmat_graph.mtx" "$out/nd/rmat_graph_coalesced.npz"
"$tk" validate --strict "$out/nd/rmat_graph_coalesced.npz"
echo
echo "== info on a few results"
"$tk" info "$out/npz/grid_fortran.npz"
"$tk" info --json "$out/mtx/laplacian_symmetric.mtx"
"$tk" info --json "$out/nd/ratings.npy"
echo
echo "== entries per row, and where the entries are (spy -o OUT.png writes the PNG of tools/README.md)"
"$tk" info --rows "$here/data/rmat_graph.mtx"
"$tk" spy --text --size 48 "$here/data/rmat_graph.mtx"
echo
echo "== summary"
inputs=$(ls "$here"/data | wc -l)
outputs=$(find "$out" -type f | wc -l)
echo "$inputs sample files, $outputs converted outputs, $invalid invalid"
[ "$invalid" -eq 0 ]
