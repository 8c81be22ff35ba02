"""The command line starts without the heavy libraries: pandas, pyarrow, numpy, matplotlib and
rich load only when a command needs them (a run, a sweep, a figure)."""

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
print(json.dumps({{"code": code, "loaded": loaded}}))
"""


def _loaded_after(argv: list[str]) -> tuple[object, list[str]]:
    script = PROBE.format(argv=argv, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    return answer["code"], answer["loaded"]


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
