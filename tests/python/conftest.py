"""Shared fixtures for the Python tests: paths, a CLI runner, the `native` marker, and the
processes below a pid as /proc shows them (Linux).

Tests marked `native` need the compiled extension `multiconn._core`. Without it they are
skipped with a reason saying how to build it; with MULTICONN_REQUIRE_NATIVE=1 (as `make test`
sets) a missing extension stops the session with an error instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from multiconn import _native

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scenarios"

NATIVE_MISSING = (
    f"multiconn._core is not built ({_native.IMPORT_ERROR}); run `make setup` or `pip install .`"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _native.available():
        return
    if os.environ.get("MULTICONN_REQUIRE_NATIVE") == "1":
        pytest.exit(NATIVE_MISSING, returncode=1)
    skip = pytest.mark.skip(reason=NATIVE_MISSING)
    for item in items:
        if "native" in item.keywords:
            item.add_marker(skip)


def run_cli(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `python -m multiconn ARGS` and captures its output."""
    env = dict(os.environ, COLUMNS="100", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "multiconn", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def assert_one_error_line(stderr: str, *words: str) -> str:
    """A bad-input failure: exactly one `multiconn: error:` line, no traceback, naming
    every word of `words`; returns the line."""
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("multiconn: error: "), lines[0]
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    return lines[0]


def drawn_figures(store: Path) -> dict:
    """Writes the sweep report of `store` and returns its figures by file stem, as handed to
    matplotlib to be saved (for tests that inspect the drawn axes)."""
    from multiconn.sweep.report import figures as report_figures
    from multiconn.sweep.report import write_report

    figures: dict = {}
    save = report_figures.save_figure

    def keep(fig, folder: Path, stem: str) -> None:
        figures[stem] = fig
        save(fig, folder, stem)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_figures, "save_figure", keep)
        write_report(store)
    return figures


def record_sweeps(folder: Path, *texts: str) -> Path:
    """Plans and runs every run of the sweep files `texts` into a results store in `folder`
    (each parsed as `folder/sweep.toml`), checking that each run succeeds; returns `folder`."""
    from multiconn.sweep.execute import execute
    from multiconn.sweep.plan import plan
    from multiconn.sweep.spec import parse_sweep_text
    from multiconn.sweep.store import Store

    with Store(folder) as db:
        for text in texts:
            spec = parse_sweep_text(text, folder / "sweep.toml")
            runs = plan(spec, "test")
            db.register(spec, runs)
            for run in runs:
                outcome = execute(run.task)
                assert outcome.ok, outcome.error
                db.record(outcome, run.task.seed, "test", run.scenario_json)
    return folder


# --- processes, from /proc (Linux) -----------------------------------------------------------

def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()  # the name, in parentheses, may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def proc_cmdline(pid: int) -> str:
    """The command line of a process, its arguments joined by spaces ("" when there is none)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def descendants(root: int) -> dict[int, int]:
    """Every living process below `root`: pid -> start time (which tells a reused pid)."""
    children: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := proc_stat(int(name))) is not None and stat[0] != "Z":
            children.setdefault(stat[1], []).append((int(name), stat[2]))
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, started in children.get(todo.pop(), []):
            found[pid] = started
            todo.append(pid)
    return found


def spawned_workers(root: int) -> set[int]:
    """A sweep's worker processes below `root`: the descendants that multiprocessing spawned
    to run work (their command line runs `spawn_main`). Told by what they run, not by what
    they are not: a child just forked, before it runs its own program, still shows its
    parent's command line, and its helpers (the resource tracker) are children of the driver
    too."""
    return {pid for pid in descendants(root) if "spawn_main" in proc_cmdline(pid)}
