"""The command line starts without the heavy libraries: pandas, pyarrow, numpy, matplotlib and
rich load only when a command needs them (a run, a sweep, a figure); and a command loads only
its own modules (the parsers of the others are not built)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "rich", "dask")

PROBE = """
import contextlib, io, json, sys
import multiconn.cli
code = None
if {argv!r}:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = multiconn.cli.main({argv!r})
        except SystemExit as exc:
            code = exc.code
loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))
ours = sorted(m for m in sys.modules if m.startswith("multiconn."))
print(json.dumps({{"code": code, "loaded": loaded, "modules": ours}}))
"""


def _probe(argv: list[str]) -> dict[str, object]:
    script = PROBE.format(argv=argv, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _loaded_after(argv: list[str]) -> tuple[object, list[str]]:
    answer = _probe(argv)
    return answer["code"], answer["loaded"]  # type: ignore[return-value]


@pytest.mark.parametrize("argv", [
    [],
    ["--version"],
    ["--help"],
    ["run", "--help"],
    ["validate", "examples/scenarios/bulk.toml"],
    ["validate", "examples/scenarios/no-such-file.toml"],
])
def test_light_commands_load_no_heavy_library(argv: list[str]) -> None:
    code, loaded = _loaded_after(argv)
    assert loaded == [], f"`multiconn {' '.join(argv)}` imported {loaded}"
    expected = {"validate": 0 if "bulk" in argv[-1] else 2}.get(argv[0], 0) if argv else None
    assert code == expected, f"`multiconn {' '.join(argv)}` exited {code}"


def test_import_multiconn_is_light_and_names_load_on_use() -> None:
    script = (
        "import sys, multiconn\n"
        f"before = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "multiconn.RunResult\n"
        "after = 'multiconn.result' in sys.modules\n"
        "print(before, after, multiconn.__version__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "[]"
    assert out[1] == "True"
    assert out[2][0].isdigit()


def test_a_run_writes_parquet_with_pyarrow_alone(tmp_path: Path) -> None:
    """A run needs pyarrow to write its tables, not pandas; the summary table needs rich."""
    pytest.importorskip("multiconn._core")
    code, loaded = _loaded_after(["run", "examples/scenarios/bulk.toml", "--out",
                                  str(tmp_path / "run"), "--set", "run.duration=0.2s"])
    assert code == 0
    assert (tmp_path / "run" / "timeseries.parquet").stat().st_size > 0
    assert loaded == ["numpy", "pyarrow", "rich"]


RUN_MODULES = ["multiconn._core", "multiconn._native", "multiconn.cli", "multiconn.errors",
               "multiconn.frame", "multiconn.progress", "multiconn.report", "multiconn.result",
               "multiconn.runner", "multiconn.source"]
"""What `multiconn run` loads of ours: no other command's module (sweep, studies, plot, ...)."""


@pytest.mark.parametrize("talk", [[], ["-q"], ["--json"]])
def test_a_run_loads_its_own_modules_and_rich_only_to_print_the_table(
        tmp_path: Path, talk: list[str]) -> None:
    pytest.importorskip("multiconn._core")
    answer = _probe(["run", "examples/scenarios/bulk.toml", "--out", str(tmp_path / "run"),
                     "--set", "run.duration=0.2s", *talk])
    assert answer["code"] == 0
    assert answer["modules"] == RUN_MODULES
    # The progress bar loads rich only once it appears (after a second): a short run that
    # prints no table never loads it.
    assert answer["loaded"] == (["numpy", "pyarrow"] if talk else ["numpy", "pyarrow", "rich"])


@pytest.mark.parametrize("argv", [["--help"], ["list", "--help"], ["studies", "--help"]])
def test_help_loads_the_modules_of_the_commands_it_shows(argv: list[str]) -> None:
    modules = _probe(argv)["modules"]
    everything = argv == ["--help"]
    assert ("multiconn.sweep.commands" in modules) == (everything or argv[0] == "list")  # type: ignore[operator]
    assert ("multiconn.findings.command" in modules) == (everything or argv[0] == "studies")  # type: ignore[operator]
    assert "multiconn.findings.evaluate" not in modules  # type: ignore[operator]


def test_the_command_table_names_every_command_of_the_parser() -> None:
    """`main` builds only the parser of the command named; `COMMANDS` says which function
    adds which names, in the order `--help` lists them."""
    from multiconn.cli import COMMANDS, build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert list(subparsers.choices) == [n for names, _ in COMMANDS for n in names]  # type: ignore[union-attr]
    for names, _ in COMMANDS:
        one = build_parser(names[0])
        sub = next(a for a in one._actions if a.dest == "command")
        assert list(sub.choices) == list(names)  # type: ignore[union-attr]
