#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking tensorkit needs.
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libtbb-dev
  libsuitesparse-dev libgraphblas-dev
  libopenblas-dev libblis-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libdlpack-dev
  libfarmhash-dev libfast-float-dev
  zlib1g-dev libpng-dev
  clang libclang-rt-14-dev
  python3 python3-numpy python3-scipy python3-sklearn
)
# Peers for bench/peers only; large, so opt-in.
if [[ "${TENSORKIT_BENCH_PEERS:-0}" == "1" ]]; then
  packages+=(python3-torch python3-threadpoolctl libeigen3-dev)
  # bench_gemm compares oneDNN's sgemm with tensorkit's BLIS backend (loaded with dlopen).
  packages+=(libdnnl2)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
