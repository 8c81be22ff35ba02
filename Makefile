# Development tasks: setup (virtualenv + native extension), test, demo, bench.
# Override the interpreter with `make PYTHON=python3.12 setup`.

PYTHON ?= $(shell command -v python3.11 >/dev/null 2>&1 && echo python3.11 || echo python3)
VENV := .venv
VPY := $(VENV)/bin/python
# The Cargo profile `make setup` builds the extension and the emulator with: `release` (what
# users run and the benchmarks measure). `make test` passes `release-nolto` (Cargo.toml) so
# that they and its test binaries share one optimised build without link-time optimisation.
BUILD_PROFILE ?= release
# Cargo features of the extension's crate (crates/py): `make test` passes `test-build`, which
# gives the extension the same compiled crates as its test binaries (one build, not two).
BUILD_FEATURES ?=
# What maturin is told beyond its defaults (release, no features); the tests that build the
# package again get it too (MULTICONN_MATURIN_ARGS), so they reuse what this build compiled.
MATURIN_ARGS := $(strip $(if $(filter-out release,$(BUILD_PROFILE)),--profile $(BUILD_PROFILE)) $(if $(BUILD_FEATURES),--features $(BUILD_FEATURES)))
STAMP := $(VENV)/.installed-$(BUILD_PROFILE)$(if $(BUILD_FEATURES),+$(BUILD_FEATURES))

# The extension is rebuilt when any of these change.
SOURCES := Cargo.toml Cargo.lock pyproject.toml requirements.lock \
	$(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) \
	$(shell find python -name '*.py' -o -name '*.pyi' 2>/dev/null)

.PHONY: emu-tools emu-stacks emu-tquic setup test test-emu test-rust test-python test-stubs fuzz demo bench clean-venv

setup: $(STAMP)

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

# Dependencies come from the lock file; the project is installed editable (Python edits are
# live; maturin rebuilds the Rust extension in release mode when this target re-runs).
# The extension lives in the source tree, so building it with one profile makes the other
# profile's stamp stale: it is removed.
$(STAMP): $(VENV)/bin/activate $(SOURCES)
	$(VPY) -m pip install --quiet -r requirements.lock
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(if $(MATURIN_ARGS),MATURIN_PEP517_ARGS="$(MATURIN_ARGS)") \
	  $(VPY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@# The emulator comes with the extension: pip installs its `multiconn-emu` entry point.
	$(VPY) -c "import multiconn, multiconn._core; print('multiconn', multiconn.__version__, 'ready')"
	rm -f $(VENV)/.installed-*
	touch $@

# The real stacks the emulator starts. `emu-stacks`: Debian's packages, installed when
# running as root on a machine with apt (a minute or two); elsewhere a note says what is
# missing. `emu-tquic`: tquic's tools, built with cargo into the virtualenv (BoringSSL
# included: some 10 to 20 minutes on two cores, once; cargo shows its progress). `emu-tools`
# does both. `make test-emu` installs them and runs the emulator's tests against them;
# `make test` runs those tests only where the stacks are already installed (they skip,
# saying why, elsewhere).
EMU_PACKAGES := iperf3 ngtcp2-client ngtcp2-server mptcpize openssl iproute2 util-linux cmake g++
TQUIC_TOOLS_VERSION := 1.6.0
emu-tools: emu-stacks emu-tquic

emu-stacks:
	@if command -v iperf3 >/dev/null && command -v gtlsserver >/dev/null && command -v mptcpize >/dev/null; then \
	  echo "emulator stacks: installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "emulator stacks: apt-get install $(EMU_PACKAGES)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  timeout 900 apt-get install -y -q --no-install-recommends $(EMU_PACKAGES) >/dev/null 2>&1 || \
	  { timeout 300 apt-get update -q >/dev/null 2>&1; timeout 900 apt-get install -y -q --no-install-recommends $(EMU_PACKAGES) >/dev/null; } || \
	  echo "note: could not install $(EMU_PACKAGES) with apt-get; the emulator's tests that need them will skip"; \
	else \
	  echo "note: the emulator's stacks need root to install: sudo apt-get install $(EMU_PACKAGES)"; \
	fi

# tquic's tools (multipath QUIC, draft-05) build BoringSSL: they need cmake and a C++
# compiler (emu-stacks installs both).
emu-tquic:
	@if [ -x $(VENV)/bin/tquic_server ] || command -v tquic_server >/dev/null; then \
	  echo "tquic tools: installed"; \
	elif command -v cmake >/dev/null && command -v c++ >/dev/null; then \
	  echo "tquic tools: building tquic_tools $(TQUIC_TOOLS_VERSION) into $(VENV)/bin with cargo (BoringSSL included: 5 to 20 minutes on two cores, once; 'make emu-stacks' alone skips this)"; \
	  cargo install tquic_tools --version $(TQUIC_TOOLS_VERSION) --root $(VENV) || \
	  echo "note: tquic_tools did not build; the emulator's tquic tests will skip"; \
	else \
	  echo "note: tquic_tools needs cmake and a C++ compiler (make emu-stacks installs them); the emulator's tquic tests will skip"; \
	fi

test:
	$(MAKE) BUILD_PROFILE=release-nolto BUILD_FEATURES=test-build setup test-rust test-python test-stubs

# The emulator against the real stacks (root): installs them, then runs the emulator's tests
# with every stack required, so a missing one fails instead of skipping.
test-emu: setup emu-tools
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" MULTICONN_REQUIRE_EMU=1 cargo test --release -p multiconn-emu
	MULTICONN_REQUIRE_EMU=1 MULTICONN_REQUIRE_NATIVE=1 $(VPY) -m pytest tests/python/test_emulate.py -q -m "slow or not slow"

# Every run the tests make has the invariant checker on (docs/invariants.md); it never
# changes results, so the snapshot nets hold with it.
test-rust test-python: export MULTICONN_CHECK_INVARIANTS = 1
test-python test-emu: export MULTICONN_MATURIN_ARGS = $(MATURIN_ARGS)

# The emulator's tests find the tools `make setup` put in the virtualenv.
# Test binaries without LTO (Cargo.toml, profile release-nolto): the same optimisation level,
# a fraction of the link time.
test-rust:
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cargo test --workspace --profile release-nolto

# Every Python test, the slow ones included (a plain `pytest` leaves them out).
# On every core (pytest-xdist), but the emulator's real-time tests alone afterwards, so that no
# simulation competes with them for the CPU.
test-python: setup
	MULTICONN_REQUIRE_NATIVE=1 $(VPY) -m pytest tests/python -q -m "slow or not slow" -n auto --ignore=tests/python/test_emulate.py
	MULTICONN_REQUIRE_NATIVE=1 $(VPY) -m pytest tests/python/test_emulate.py -q -m "slow or not slow"

# The type stubs of the native module (python/multiconn/_core.pyi) against the built module.
test-stubs: setup
	$(VPY) -m mypy.stubtest multiconn._core

# The long fuzzing run (`make test` runs a short, fixed-seed one): FUZZ_CASES inputs per
# target with a random seed, printed so a failure can be replayed with FUZZ_SEED=N. Rust:
# scenario text, --set overrides and trace files (crates/scenario/tests/it/fuzz.rs); Python:
# sweep files, drive tables and `multiconn run --set` (tests/python/test_fuzz.py). A case may
# take FUZZ_TIMEOUT_S seconds; the test process may use at most 8 GB of address space.
FUZZ_CASES ?= 20000
ifeq ($(origin FUZZ_SEED),undefined)
FUZZ_SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
FUZZ_TIMEOUT_S ?= 20
FUZZ_ENV = MULTICONN_FUZZ_CASES=$(FUZZ_CASES) MULTICONN_FUZZ_SEED=$(FUZZ_SEED) MULTICONN_FUZZ_TIMEOUT_S=$(FUZZ_TIMEOUT_S)
fuzz: setup
	@echo "fuzz: $(FUZZ_CASES) cases per target, seed $(FUZZ_SEED) (replay: make fuzz FUZZ_SEED=$(FUZZ_SEED))"
	cargo test --release -p multiconn-scenario --test it --no-run
	ulimit -v 8000000 && $(FUZZ_ENV) cargo test --release -p multiconn-scenario --test it fuzz:: -- --nocapture --test-threads 1
	ulimit -v 8000000 && $(FUZZ_ENV) $(VPY) -m pytest tests/python/test_fuzz.py -q -s -p no:cacheprovider --hypothesis-show-statistics

# DEMO_SET=KEY=VALUE overrides a value of examples/scenarios/demo.toml.
demo: setup
	$(VPY) examples/demo.py --out out/demo $(if $(DEMO_SET),--set $(DEMO_SET))

bench: setup emu-tools
	cargo bench --workspace
	$(VPY) bench/bench_bulk.py
	$(VPY) bench/bench_memory.py
	$(VPY) bench/bench_transport.py
	$(VPY) bench/bench_sweep.py
	$(VPY) bench/bench_dc.py
	$(VPY) bench/bench_make_test.py
	$(VPY) bench/bench_downloads.py
	$(VPY) bench/bench_emu.py
	$(VPY) bench/bench_cell.py
	$(VPY) bench/bench_nr_cell.py
	$(VPY) bench/bench_mobility.py
	$(VPY) bench/scoreboard.py

clean-venv:
	rm -rf $(VENV)
