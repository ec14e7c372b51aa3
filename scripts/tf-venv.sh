#!/usr/bin/env bash
# Creates (or reuses) the virtual environment .venvs/tf with the pinned TensorFlow wheel that the
# op library in embed/tensorflow/ is built against and tested with. Exits 0 when the venv is
# ready, 1 with a message when the wheel cannot be installed (for example without a network).
set -uo pipefail

cd "$(dirname "$0")/.."
venv=.venvs/tf
pins=(tensorflow-cpu==2.21.0 pytest==9.2.0)

ready() {
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" - "${pins[@]}" <<'PY' 2>/dev/null
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    if metadata.version(name) != version:
        sys.exit(1)
PY
}

if ready; then
  exit 0
fi
python=$(command -v python3.11 || command -v python3)
echo "tf-venv: installing ${pins[*]} into $venv (about a minute, 1.6 GB)"
if ! { [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"; } ||
   ! "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" || ! ready; then
  echo "tf-venv: could not install ${pins[*]} (no network or no wheel for $("$python" -V));" \
       "the TensorFlow op library is not built and its tests skip" >&2
  exit 1
fi
