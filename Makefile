# Development tasks: setup (virtualenv + native extension), test, demo, bench.
# Override the interpreter with `make PYTHON=python3.12 setup`.

PYTHON ?= $(shell command -v python3.11 >/dev/null 2>&1 && echo python3.11 || echo python3)
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The extension is rebuilt when any of these change.
SOURCES := Cargo.toml Cargo.lock pyproject.toml requirements.lock \
	$(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) \
	$(shell find python -name '*.py' -o -name '*.pyi' 2>/dev/null)

.PHONY: setup test test-rust test-python test-stubs demo bench clean-venv

setup: $(STAMP)

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

# Dependencies come from the lock file; the project is installed editable (Python edits are
# live; maturin rebuilds the Rust extension in release mode when this target re-runs).
$(STAMP): $(VENV)/bin/activate $(SOURCES)
	$(VPY) -m pip install --quiet -r requirements.lock
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(VPY) -c "import multiconn, multiconn._core; print('multiconn', multiconn.__version__, 'ready')"
	touch $@

test: setup test-rust test-python test-stubs

test-rust:
	cargo test --workspace --release

# Every Python test, the slow ones included (a plain `pytest` leaves them out).
test-python: setup
	MULTICONN_REQUIRE_NATIVE=1 $(VPY) -m pytest tests/python -q -m "slow or not slow"

# The type stubs of the native module (python/multiconn/_core.pyi) against the built module.
test-stubs: setup
	$(VPY) -m mypy.stubtest multiconn._core

# DEMO_SET=KEY=VALUE overrides a value of examples/scenarios/demo.toml.
demo: setup
	$(VPY) examples/demo.py --out out/demo $(if $(DEMO_SET),--set $(DEMO_SET))

bench: setup
	cargo bench --workspace
	$(VPY) bench/bench_bulk.py
	$(VPY) bench/bench_transport.py
	$(VPY) bench/bench_sweep.py
	$(VPY) bench/bench_dc.py
	$(VPY) bench/bench_downloads.py

clean-venv:
	rm -rf $(VENV)
