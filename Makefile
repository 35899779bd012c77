# Two commands do everything on a fresh Debian 12 machine with Python 3.11:
#   make run   set up, build, run the default conformance run against the bundled backend
#   make test  set up, build, run every test (ctest + pytest); .ci/run calls this
# Each step is guarded by a stamp or a file target, so a second call redoes only what is stale.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
STAMPS := $(BUILD)/stamps
JOBS ?= 2

APT_PACKAGES := build-essential cmake ninja-build ccache pkg-config googletest libgtest-dev \
	libgmock-dev nlohmann-json3-dev libsqlite3-dev sqlite3 libcli11-dev libfmt-dev libboost-dev \
	libboost-filesystem-dev libpugixml-dev chromium
CLANG_PACKAGES := clang-16 libclang-rt-16-dev

BACKEND_PYTHON := $(shell find backend/python -name '*.py' -o -name '*.toml')
# The bundled backend's package carries the reviewed skip lists (its entry point names them).
SKIPLIST_FILES := $(wildcard skiplists/*.json skiplists/README.md skiplists/ledger/*.json)
STAGED_LIBS := $(BUILD)/backend/stage/libtorch_neuronsim.so

.PHONY: all setup cmake-build build wheel run test test-fast fuzz test-asan test-cpp test-python bench-backend bench-ops bench-late-errors bench-compile-latency bench-capture bench-skiplist bench-reports bench-hf bench-modules bench-optim bench-upstream bench-distributed bench-compile bench-sizes bench-check-model bench-nightly format clean help
all: build

help:
	@echo "make run            set up, build and run the default run against the bundled backend"
	@echo "make test           set up, build and run every test (ctest and pytest)"
	@echo "make test-fast      the edit loop: ctest and the tests that start no run (architecture, comparison, suite API)"
	@echo "make build          set up and build only"
	@echo "make wheel          the two wheels into dist/: neuron_conform (the harness) and torch_neuronsim"
	@echo "make fuzz           every libFuzzer target for FUZZ_SECONDS (600) each, ASan+UBSan (docs/robustness.md)"
	@echo "make test-asan      build the harness and the backend with ASan+UBSan and run ctest there"
	@echo "make bench-backend  backend benchmark (copies, round trip, eager op latency vs CPU, queued and fused streams, shared compile cache)"
	@echo "make bench-ops      the whole operator suite, every check, -j 2: time and each check's share (ci/bench-ops.sh)"
	@echo "make bench-late-errors  a planted late error in the middle of a shard, 20 runs a mode: how often it is charged to its case"
	@echo "make bench-compile-latency  an ops slice at compile latency 0, realistic cold and warm, and after run --warm"
	@echo "make bench-capture  the dispatcher capture's cost per case (ops suite slice, bundled and foreign backends)"
	@echo "make bench-skiplist resolve 100,000 cases against 5,000 skip-list entries"
	@echo "make bench-reports  report on a full-size run, dashboard over 365 nightly runs"
	@echo "make bench-hf       every causal-LM architecture, forward, float32, -j 2: per-architecture times"
	@echo "make bench-modules  the modules suite (module_db), -j 2: time and cases per second"
	@echo "make bench-optim    the optim suite (optim_db), -j 2: time and cases per second"
	@echo "make bench-upstream listing the upstream suite over one generated 4,000-test file: time"
	@echo "make bench-distributed  the distributed suite at world size 2, -j 2: time, share starting worlds"
	@echo "make bench-compile  the compile suite's forward check at float32 and bfloat16, cold and warm cache"
	@echo "make bench-sizes    the sizes suite (tile boundaries, model shapes), -j 2: time per op family"
	@echo "make bench-check-model  check-model on a 6.7 B-parameter Llama config: time and peak RSS"
	@echo "make bench-nightly  the whole nightly (every suite) on a scratch DB: per-suite time, cases/s, total"
	@echo "make format         clang-format the C++ sources"

# --- Debian packages -------------------------------------------------------------------------
# Installs the missing ones of the packages given.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
		| grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "==> apt-get install $$missing"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

$(STAMPS)/apt:
	@mkdir -p $(STAMPS)
	$(call apt_install,$(APT_PACKAGES))
	@touch $@

# --- Python environment ----------------------------------------------------------------------
$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMPS)/python: $(PY) requirements.txt constraints.txt | $(STAMPS)/apt
	@echo "==> pip install -r requirements.txt"
	$(PY) -m pip install -q -c constraints.txt -r requirements.txt
	@touch $@

# --- C++ build -------------------------------------------------------------------------------
$(BUILD)/build.ninja: $(STAMPS)/python CMakeLists.txt backend/CMakeLists.txt harness/CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja \
		-DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
		-DPython3_EXECUTABLE="$(abspath $(PY))"

# Ninja knows what is out of date: always ask it (a no-op build takes a fraction of a second).
cmake-build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The package is installed (not editable) with the libraries CMake staged.
$(STAMPS)/backend-installed: $(STAGED_LIBS) $(BACKEND_PYTHON) $(SKIPLIST_FILES)
	@echo "==> pip install backend/python (torch_neuronsim)"
	NEURONSIM_LIB_DIR="$(abspath $(BUILD)/backend/stage)" \
		$(PY) -m pip install -q --no-deps --no-build-isolation --force-reinstall ./backend/python
	@rm -rf backend/python/build backend/python/*.egg-info
	@touch $@

setup: $(STAMPS)/python
build: cmake-build
	@$(MAKE) --no-print-directory $(STAMPS)/backend-installed
	@# The dispatcher capture's C++ observer, built into its cache against this torch (docs/backends.md)
	@$(PY) harness/worker/native_capture.py >/dev/null

# --- Wheels (docs/install.md) ----------------------------------------------------------------
# neuron_conform: the CLI this build made and its tests ran, stripped, packaged by
# scikit-build-core (pyproject.toml; its CMake build stays in build/wheel and compiles nothing);
# auditwheel copies the shared libraries the CLI links (fmt, SQLite, Boost.Filesystem, pugixml)
# into the wheel and tags it manylinux. torch_neuronsim: the bundled backend against this torch,
# with its skip lists, tagged linux_x86_64 as backends that link libtorch are.
wheel: build
	@rm -rf dist $(BUILD)/wheel-raw
	@mkdir -p $(BUILD)/wheel-raw
	strip -o $(BUILD)/wheel-raw/neuron-conform $(BUILD)/neuron-conform
	$(PY) -m pip wheel -q --no-build-isolation --no-deps . -w $(BUILD)/wheel-raw \
		-C cmake.define.NEURON_CONFORM_PREBUILT_CLI="$(abspath $(BUILD)/wheel-raw/neuron-conform)"
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair -w dist $(BUILD)/wheel-raw/neuron_conform-*.whl \
		>$(BUILD)/wheel-raw/auditwheel.log 2>&1 || { cat $(BUILD)/wheel-raw/auditwheel.log; exit 1; }
	NEURONSIM_LIB_DIR="$(abspath $(BUILD)/backend/stage)" \
		$(PY) -m pip wheel -q --no-build-isolation --no-deps ./backend/python -w dist
	@rm -rf backend/python/build backend/python/*.egg-info
	@ls -1 dist

# --- Commands --------------------------------------------------------------------------------
# The default conformance run: the operator suite, forward check, float32 and bfloat16,
# against the bundled backend, recorded in out/results.db.
run: build
	$(PY) backend/examples/seed_example.py
	$(BUILD)/neuron-conform run --suite ops --checks forward --dtypes float32,bfloat16 --db out/results.db

test: test-cpp test-python

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The tests that need no run of the CLI: seconds, for the edit loop (make test runs them too).
FAST_TESTS := harness/tests/test_architecture.py harness/tests/test_comparison.py harness/tests/test_suite_api.py
test-fast: test-cpp
	$(PY) -m pytest -q $(FAST_TESTS) $(wildcard harness/tests/test_backend_architecture.py)

test-python: build wheel
	@# Two test files at a time (a file's tests share its module fixtures): a test mostly waits on
	@# one Python process importing torch, so one file at a time leaves a core idle.
	$(PY) -m pytest -q -n $(JOBS) --dist loadfile --durations=25 backend/tests/python harness/tests

# --- Robustness (docs/robustness.md) --------------------------------------------------------
# Every fuzz target for FUZZ_SECONDS each, two at a time, under ASan and UBSan (clang, build-fuzz/).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := skiplist protocol suite_description baseline case_id shard ledger
# clang 16 and its runtimes (libFuzzer, the sanitizers) are installed here: only make fuzz needs them.
fuzz: $(STAMPS)/apt
	$(call apt_install,$(CLANG_PACKAGES))
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 \
		-DNEURON_CONFORM_FUZZ=ON -DNEURON_CONFORM_BACKEND=OFF
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	ci/fuzz.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The harness and the bundled backend's C++ under ASan and UBSan (build-asan/), then ctest there.
test-asan: $(STAMPS)/python
	cmake -S . -B build-asan -G Ninja -DNEURON_CONFORM_SANITIZE=ON \
		-DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
		-DPython3_EXECUTABLE="$(abspath $(PY))"
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

bench-backend: build
	$(PY) backend/bench/bench_backend.py
	$(PY) backend/bench/bench_cache.py

bench-ops: build
	ci/bench-ops.sh

bench-late-errors: build
	$(PY) harness/bench/bench_late_errors.py

bench-compile-latency: build
	$(PY) harness/bench/bench_compile_latency.py

bench-capture: build
	$(PY) harness/bench/bench_capture.py
	@# 40 cases: without the capture, the foreign test backend kills its process on addcdiv's backward
	$(PY) harness/bench/bench_capture.py --backend-module foreign_backend --cases 40

bench-skiplist: build
	$(BUILD)/harness/bench_skiplist

bench-reports: build
	$(BUILD)/harness/bench_reports

bench-hf: build
	ci/bench-hf.sh

bench-modules: build
	ci/bench-modules.sh

bench-optim: build
	ci/bench-optim.sh

bench-upstream: build
	ci/bench-upstream.sh

bench-distributed: build
	ci/bench-distributed.sh

bench-compile: build
	ci/bench-compile.sh

bench-sizes: build
	ci/bench-sizes.sh

bench-check-model: build
	ci/bench-check-model.sh

bench-nightly: build
	ci/bench-nightly.sh

format:
	@command -v clang-format >/dev/null || { echo "make format needs clang-format (apt-get install clang-format)"; exit 1; }
	clang-format -i $$(find backend/csrc backend/tests harness/src harness/tests harness/bench -name '*.cpp' -o -name '*.h')

clean:
	rm -rf $(BUILD)
