#!/usr/bin/env bash
# Creates (or reuses) the virtual environment .venvs/torch that the PyTorch operator library in
# embed/torch/ is built against and tested with: torch, FBGEMM's CPU operators and TorchRec, at
# versions that load together (fbgemm-gpu-cpu 1.9.0 fails to load with torch 2.15). Exits 0 when
# the venv is ready, 1 with a message when the wheels cannot be installed (for example without a
# network).
#
# TorchRec's wheel asks for `fbgemm-gpu` (the CUDA build); it runs on `fbgemm-gpu-cpu`, so it is
# installed without its dependencies and those are named here instead. PyPI's torch wheel for
# Linux x86_64 depends on the CUDA runtime wheels (nvidia-*, cuda-*, triton: 2.3 GB of the
# 2.9 GB download); torch's CPU-only index is not PyPI, so they come too.
set -uo pipefail

cd "$(dirname "$0")/.."
venv=.venvs/torch
pins=(torch==2.14.1 fbgemm-gpu-cpu==1.9.0 numpy==2.4.6 pytest==9.2.0
      tensordict==0.15.3 torchmetrics==1.0.3 tqdm pyre-extensions pyarrow==26.0.1)
nodeps=(torchrec==1.9.2)

ready() {
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" - "${pins[@]}" "${nodeps[@]}" <<'PY' 2>/dev/null
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name, _, version = pin.partition("==")
    if version and metadata.version(name) != version:
        sys.exit(1)
PY
}

if ready; then
  exit 0
fi
python=$(command -v python3.11 || command -v python3)
echo "torch-venv: installing ${pins[*]} ${nodeps[*]} into $venv (about two minutes: 2.9 GB to download, 5.5 GB installed)"
if ! { [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"; } ||
   ! "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" ||
   ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "${nodeps[@]}" ||
   ! ready; then
  echo "torch-venv: could not install ${pins[*]} ${nodeps[*]} (no network or no wheel for" \
       "$("$python" -V)); the PyTorch operator library is not built and its tests skip" >&2
  exit 1
fi
