#!/usr/bin/env python3
"""Benchmark: `make test` in a fresh clone, phase by phase.

    .venv/bin/python bench/bench_make_test.py [--keep]

Clones the repository's committed HEAD into a temporary folder (nothing built: no `.venv`, no
`target/`) and runs there, one after the other and timed each, the targets `make test` runs
with the variables it passes them, as the Makefile's `test` recipe names them (setup, the Rust
tests with their build, the Python tests, the stubs). Their sum is what a fresh clone's
`make test` takes; Python's packages come from pip's cache when it has them. Writes
bench-out/make_test.json (read by bench/scoreboard.py). The goal: at most 8 minutes on 2
cores, with no test left out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from scoreboard import MAKE_TEST_MIN  # noqa: E402  (the goal has one owner)

GOAL_S = MAKE_TEST_MIN * 60


def test_recipe(makefile: Path) -> tuple[list[str], list[str]]:
    """The variable assignments and the targets of the `test` target's recipe:
    `$(MAKE) VAR=value ... target ...`."""
    text = makefile.read_text(encoding="utf-8")
    found = re.search(r"^test:[^\n]*\n\t\$\(MAKE\) ([^\n]+)$", text, re.MULTILINE)
    if found is None:
        sys.exit(f"{makefile}: no `test:` target whose recipe is one `$(MAKE) ...` line")
    words = shlex.split(found.group(1))
    assignments = [w for w in words if "=" in w]
    targets = [w for w in words if "=" not in w]
    return assignments, targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    if dirty:
        print("bench_make_test: uncommitted changes are not measured (the clone is of HEAD)", file=sys.stderr)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="bench-make-test-"))
    clone = work / "clone"
    phases: dict[str, float] = {}
    failed = None
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        assignments, targets = test_recipe(clone / "Makefile")
        # As from a fresh shell: not the calling make's flags, virtualenv or target folder.
        inherited = ("CARGO_TARGET_DIR", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
        env = {k: v for k, v in os.environ.items() if k not in inherited}
        log = work / "make.log"
        print(f"bench_make_test: {head} in {clone}; make {' '.join(assignments)} <target> for "
              f"{', '.join(targets)} (log: {log})", flush=True)
        with log.open("w") as out:
            for target in targets:
                started = time.perf_counter()
                done = subprocess.run(["make", "-C", str(clone), *assignments, target], env=env,
                                      stdout=out, stderr=subprocess.STDOUT, check=False)
                phases[target] = round(time.perf_counter() - started, 1)
                print(f"bench_make_test: {target}: {phases[target]:.0f} s", flush=True)
                if done.returncode != 0:
                    failed = f"make {target} failed (exit {done.returncode}); see {log}"
                    break
    finally:
        if args.keep or failed:
            print(f"bench_make_test: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        sys.exit(f"bench_make_test: {failed}")
    total = sum(phases.values())
    result = {"commit": head, "cores": os.cpu_count(), "phases_s": phases,
              "total_s": round(total, 1), "goal_s": GOAL_S}
    table = Table(title=f"make test in a fresh clone of {head} ({os.cpu_count()} cores)")
    table.add_column("phase")
    table.add_column("wall time")
    for target, seconds in phases.items():
        table.add_row(target, f"{seconds:.0f} s")
    table.add_row("make test", f"{total / 60:.1f} min (goal {GOAL_S / 60:.0f} min)")
    Console().print(table)
    out = ROOT / "bench-out"
    out.mkdir(exist_ok=True)
    (out / "make_test.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
