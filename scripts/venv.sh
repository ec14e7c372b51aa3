#!/usr/bin/env bash
# Creates (or reuses) a virtual environment with pinned packages from PyPI: the one way the
# Makefile makes its venvs (.venvs/python, tf, torch, dask, arrow, scipy, fbgemm, wheel, ...).
#
#   scripts/venv.sh [--site] VENV "WHAT IS SKIPPED WITHOUT IT" PIN... [--no-deps PIN...]
#
# A PIN is `name==version` (checked exactly) or a bare name (checked installed). Pins after
# --no-deps are installed without their dependencies (a wheel whose declared dependencies are
# wrong for this use, such as TorchRec's CUDA fbgemm-gpu; its real ones are pinned before).
# --site lets the venv see the system's packages. The venv is reused when every pin is already
# satisfied, so a second call costs one interpreter start. Exits 0 when the venv is ready, 1 with
# a message naming what is skipped when it cannot be made (for example without a network).
set -uo pipefail

cd "$(dirname "$0")/.."
site=()
if [[ "${1:-}" == --site ]]; then
  site=(--system-site-packages)
  shift
fi
if (($# < 3)); then
  echo "usage: scripts/venv.sh [--site] VENV \"what is skipped\" PIN... [--no-deps PIN...]" >&2
  exit 2
fi
venv=$1
skipped=$2
shift 2
pins=()
nodeps=()
target=pins
for arg in "$@"; do
  if [[ "$arg" == --no-deps ]]; then
    target=nodeps
  elif [[ $target == pins ]]; then
    pins+=("$arg")
  else
    nodeps+=("$arg")
  fi
done
name=$(basename "$venv")

ready() {
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" - "${pins[@]}" "${nodeps[@]}" <<'PY' 2>/dev/null
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name, _, version = pin.partition("==")
    installed = metadata.version(name.split("[")[0])  # raises when the package is absent
    if version and installed != version:
        sys.exit(1)
PY
}

if ready; then
  exit 0
fi
# Debian's Python 3.11 (DESIGN.md), else whichever python3 is first on PATH.
python=/usr/bin/python3
[[ -x "$python" ]] || python=$(command -v python3)
echo "$name-venv: installing ${pins[*]} ${nodeps[*]} into $venv"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
if ! { [[ -x "$venv/bin/python" ]] || "$python" -m venv "${site[@]}" "$venv"; } ||
   ! "${pip[@]}" "${pins[@]}" ||
   { ((${#nodeps[@]})) && ! "${pip[@]}" --no-deps "${nodeps[@]}"; } ||
   ! ready; then
  echo "$name-venv: could not install ${pins[*]} ${nodeps[*]} (no network or no wheel for" \
       "$("$python" -V)); $skipped" >&2
  exit 1
fi
