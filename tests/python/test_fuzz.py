"""Fuzzing of the readers written in Python: sweep files, drive tables (CSV, Parquet,
G-NetTrack, 5Gophers) and `multiconn run --set` through the command line.

The property, for every input: a result or the project's clean error (SweepError,
DriveTableError, exit code 2 with one `multiconn: error:` line naming the file or field),
never another exception, never past a time bound. `cargo test`'s Rust side fuzzes the
scenario files, overrides and traces (crates/scenario/tests/it/fuzz.rs).

A plain run is short and derandomized (reproducible in CI). `make fuzz` sets
MULTICONN_FUZZ_CASES (examples per test) and MULTICONN_FUZZ_SEED (a random seed, printed),
and runs the long version.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import signal
import string
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import tomli_w
from hypothesis import HealthCheck, Phase, event, given, seed, settings
from hypothesis import strategies as st

from multiconn import drive
from multiconn.errors import DriveTableError, SweepError
from multiconn.sweep import plan as sweep_plan
from multiconn.sweep.spec import parse_sweep_text

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "python" / "multiconn" / "catalog"
EXAMPLES = ROOT / "examples" / "scenarios"
GNETTRACK_SAMPLE = ROOT / "crates" / "link" / "tests" / "data" / "gnettrack-synthetic.csv"

CASES = int(os.environ.get("MULTICONN_FUZZ_CASES", "0") or 0)
"""Examples per test; 0 (unset) is the short run."""
LONG = CASES > 0
WALL_BOUND_S = float(os.environ.get("MULTICONN_FUZZ_TIMEOUT_S", "20"))
"""How long one example may take before it counts as a hang."""


def fuzz_settings(short_cases: int) -> Callable[[Any], Any]:
    """Hypothesis settings: `short_cases` derandomized examples, or MULTICONN_FUZZ_CASES random
    ones from MULTICONN_FUZZ_SEED; every example within a deadline."""
    chosen = settings(
        max_examples=CASES if LONG else short_cases,
        derandomize=not LONG,
        database=None,
        deadline=WALL_BOUND_S * 1000,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                               HealthCheck.data_too_large],
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=True,
    )
    fuzz_seed = os.environ.get("MULTICONN_FUZZ_SEED")

    def apply(test: Any) -> Any:
        test = chosen(test)
        return seed(int(fuzz_seed))(test) if LONG and fuzz_seed else test

    return apply


_done: dict[str, int] = {}


def progress(name: str) -> None:
    """In a long run, prints every twentieth of the examples of test `name` (shrinking
    included)."""
    if not LONG:
        return
    _done[name] = _done.get(name, 0) + 1
    if _done[name] % max(CASES // 20, 1) == 0:
        print(f"fuzz {name}: {_done[name]}/{CASES} examples", file=sys.stderr, flush=True)


class Hang(Exception):
    """An example ran past WALL_BOUND_S."""


@contextlib.contextmanager
def time_bound() -> Iterator[None]:
    """Raises Hang in the example when it runs past WALL_BOUND_S (checked between Python
    bytecodes, so also between the steps of a native run)."""
    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"the example ran past {WALL_BOUND_S} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, WALL_BOUND_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def assert_clean(error: Exception, *names: str) -> None:
    """A clean error is one line naming the file (or field) it is about."""
    text = str(error)
    assert text.strip() and "\n" not in text, repr(text)
    assert any(n in text for n in names), f"{names} not in {text!r}"


# -- values meant to break whatever field receives them ----------------------------------------

EDGE_NUMBERS = ["0", "-0", "-1", "1", "0.5", "1e308", "-1e308", "5e-324", "1e400", "nan", "NaN",
                "inf", "-inf", "4294967295", "4294967296", "9223372036854775807",
                "9223372036854775808", "18446744073709551616", "1e9", "1e15", "", " ", "-",
                "1,5", "0x10", "1_000", "2147483647", "2147483647.0"]
UNITS = ["", " ", "ms", " s", " Mbit/s", " MB", " %", " packets", " BDP", "Mbit", " h"]

edge_number = st.sampled_from(EDGE_NUMBERS)
text_field = st.one_of(edge_number, st.text(string.printable, max_size=8), st.text(max_size=6))
toml_scalar = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0, -1, 1, 2**63 - 1, -(2**63), 2**53 + 1, 10**6, 10**7]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.builds(lambda n, u: f"{n}{u}", edge_number, st.sampled_from(UNITS)),
    st.text(max_size=10),
)
toml_value = st.recursive(
    toml_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)),
    max_leaves=8,
)


# -- sweep files -------------------------------------------------------------------------------

SWEEPS = sorted(CATALOG.glob("*.toml"))
SWEEP_KEYS = sorted({k for p in SWEEPS for k in tomllib.loads(p.read_text()).keys()} |
                    {"from", "to", "step", "count", "scale", "unit", "zip", "set", "values",
                     "variant", "label", "labels", "name", "kind", "x", "y", "where", "span",
                     "repetitions", "seed", "seeds", "combine", "parameter", "bogus"})


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def mutated_sweep(draw: st.DrawFn) -> tuple[str, str]:
    """(a catalogue sweep file's name, its text with a few values, keys or bytes changed)."""
    path = draw(st.sampled_from(SWEEPS))
    doc = tomllib.loads(path.read_text())
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(doc)
        if not paths:
            break
        at = draw(st.sampled_from(paths))
        parent = _parent(doc, at)
        action = draw(st.sampled_from(["set", "set", "range", "delete", "rename", "duplicate"]))
        if action == "set":
            parent[at[-1]] = draw(toml_value)
        elif action == "range":
            parent[at[-1]] = draw(st.dictionaries(
                st.sampled_from(["from", "to", "step", "count", "scale", "unit"]),
                st.one_of(toml_scalar, st.sampled_from(["log", "linear"])), max_size=5))
        elif action == "delete":
            del parent[at[-1]]
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(SWEEP_KEYS))] = parent.pop(at[-1])
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(parent[at[-1]])
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError):  # a value TOML cannot hold (e.g. an array of mixed kinds)
        text = path.read_text()
    if draw(st.integers(0, 4)) == 0:
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(st.sampled_from(["[", "]]", "=", '"', "\n[[axis]]\n", "\n[quick]\n",
                                                  "\x00", "nan", "\n"])) + text[pos + draw(st.integers(0, 10)):]
    return path.name, text


@pytest.mark.native
@fuzz_settings(short_cases=150)
@given(mutated_sweep())
def test_sweep_files_parse_or_fail_with_one_line(case: tuple[str, str]) -> None:
    progress("sweep files")
    name, text = case
    where = str(CATALOG / f"fuzz-{name}")
    with time_bound():
        try:
            spec = parse_sweep_text(text, where)
        except SweepError as exc:
            assert_clean(exc, where)
            event("refused")
            return
        event("parsed")
        # What a sweep would run: its points and their overrides.
        count = spec.point_count
        if count <= 100_000:
            assert len(sweep_plan.points(spec)) == count
            assert len(sweep_plan.points(spec.quick_version())) >= 1


# -- drive tables ------------------------------------------------------------------------------

DRIVE_HEADER = [*drive.REQUIRED_COLUMNS, *drive.OPTIONAL_COLUMNS]
good_drive_row = st.fixed_dictionaries({
    "time_s": st.integers(0, 30).map(str), "operator": st.sampled_from(["A", "B"]),
    "earfcn": st.sampled_from(["100", "1300", "6300"]), "cell_id": st.sampled_from(["1", "2", "3"]),
    "rsrp_dbm": st.floats(-140, -44).map(lambda v: f"{v:.1f}"),
    "x_m": st.floats(0, 1000).map(str), "y_m": st.floats(0, 1000).map(str),
    "speed_mps": st.floats(0, 40).map(str),
})


@st.composite
def drive_csv(draw: st.DrawFn) -> str:
    """A drive table as CSV: plausible rows, some fields replaced by edge values, columns
    dropped or renamed, rows reordered."""
    header = list(DRIVE_HEADER)
    if draw(st.integers(0, 5)) == 0:
        header.remove(draw(st.sampled_from(header)))
    if draw(st.integers(0, 8)) == 0:
        header[draw(st.integers(0, len(header) - 1))] = draw(st.text(max_size=6))
    rows = sorted(draw(st.lists(good_drive_row, min_size=0, max_size=12)), key=lambda r: int(r["time_s"]))
    for _ in range(draw(st.integers(0, 2)) if rows else 0):
        row = rows[draw(st.integers(0, len(rows) - 1))]
        row[draw(st.sampled_from(DRIVE_HEADER))] = draw(st.one_of(text_field, st.sampled_from(["4294967295", "-140", "0"])))
    if rows and draw(st.booleans()):
        rows.reverse()
    lines = [",".join(header)]
    for row in rows:
        lines.append(",".join(str(row.get(c, "")).replace(",", ";").replace("\n", " ") for c in header))
    return "\n".join(lines) + "\n"


def _read_and_analyse(read: Callable[[Path], pd.DataFrame], path: Path,
                      analyse: Callable[[pd.DataFrame], Any]) -> None:
    progress(read.__name__)
    with time_bound():
        try:
            table = read(path)
            analyse(table)
            event("analysed")
        except DriveTableError as exc:
            assert_clean(exc, str(path), "<table>")
            event("refused")


@pytest.mark.native
@fuzz_settings(short_cases=80)
@given(drive_csv(), st.sampled_from(["csv", "parquet"]))
def test_drive_tables_read_or_fail_with_one_line(text: str, kind: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"drive.{kind}"
        if kind == "csv":
            path.write_text(text)
        else:
            # The same cells as Parquet: every column numeric where it parses, else text.
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
            for column in frame.columns:
                numbers = pd.to_numeric(frame[column], errors="coerce")
                if numbers.notna().all():
                    frame[column] = numbers
            frame.to_parquet(path)
        _read_and_analyse(drive.read_drive_table, path, lambda t: drive.analyse(t, name=str(path)))


GNETTRACK_LINES = GNETTRACK_SAMPLE.read_text().splitlines()
GNETTRACK_COLUMNS = GNETTRACK_LINES[0].split(",")


@st.composite
def gnettrack_csv(draw: st.DrawFn) -> str:
    """The synthetic G-NetTrack log with fields replaced, rows dropped, duplicated or swapped."""
    rows = [line.split(",") for line in GNETTRACK_LINES[1:]]
    rows = draw(st.lists(st.sampled_from(rows), min_size=0, max_size=10)) if draw(st.booleans()) else rows
    rows = [list(r) for r in rows]
    for _ in range(draw(st.integers(0, 6))):
        if not rows:
            break
        row = draw(st.integers(0, len(rows) - 1))
        column = draw(st.integers(0, len(GNETTRACK_COLUMNS) - 1))
        rows[row][column] = draw(st.one_of(
            text_field, st.sampled_from(["2020.02.30_00.00.00", "9999.12.31_23.59.59", "0001.01.01_00.00.00",
                                         "2020.02.29_23.59.5", "2020.13.01_00.00.00", "2147483647"])))
    return "\n".join([GNETTRACK_LINES[0], *(",".join(v.replace(",", ";").replace("\n", " ") for v in r) for r in rows)]) + "\n"


@pytest.mark.native
@fuzz_settings(short_cases=60)
@given(gnettrack_csv())
def test_gnettrack_files_read_or_fail_with_one_line(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "gnettrack.csv"
        path.write_text(text)
        _read_and_analyse(drive.read_gnettrack, path,
                          lambda t: drive.analyse(t, hold_s=drive.GNETTRACK_HOLD_S, name=str(path)))


@st.composite
def fivegophers_csv(draw: st.DrawFn) -> str:
    carriers = draw(st.lists(st.sampled_from(["Sprint", "TMobile", "Verizon", "", "x y"]), min_size=0,
                             max_size=3, unique=True))
    header = ["protocol", "num_tcp_conn", "seq_num", *(f"{c}_throughput_mbps" for c in carriers)]
    if draw(st.integers(0, 6)) == 0:
        header.remove(draw(st.sampled_from(header)))
    rows = []
    for seq in range(draw(st.integers(0, 12))):
        row = ["TCP", "8", str(seq * draw(st.sampled_from([1, 1, 1, 2, 1000, 90_000])))] + \
            [f"{draw(st.floats(0, 500)):.2f}" for _ in carriers]
        for _ in range(draw(st.integers(0, 1))):
            row[draw(st.integers(0, len(row) - 1))] = draw(st.one_of(text_field, st.sampled_from(["UDP", "1", "16"])))
        rows.append(row[:len(header)])
    return "\n".join([",".join(header), *(",".join(v.replace(",", ";").replace("\n", " ") for v in r) for r in rows)]) + "\n"


@pytest.mark.native
@fuzz_settings(short_cases=60)
@given(fivegophers_csv())
def test_5gophers_traces_read_or_fail_with_one_line(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.csv"
        path.write_text(text)
        _read_and_analyse(drive.read_5gophers, path,
                          lambda t: drive.analyse_capacities(t, name=str(path)))


# -- multiconn run --set -----------------------------------------------------------------------

SCENARIOS = [EXAMPLES / "bulk.toml", EXAMPLES / "cbr_lossy.toml", EXAMPLES / "tcp_quic_share.toml",
             EXAMPLES / "demo.toml", CATALOG / "scenarios" / "v2x_two_paths.toml"]


def _set_leaves(doc: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(the --set key, the value) of every value a --set can address."""
    leaves = []
    for key, value in doc.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            leaves.extend(_set_leaves(value, path + "."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for element in value:
                leaves.extend(_set_leaves(element, f"{path}.{element.get('name', '?')}."))
        else:
            leaves.append((path, value))
    return leaves


SET_LEAVES = sorted({(k, str(v)) for s in SCENARIOS for k, v in _set_leaves(tomllib.loads(s.read_text()))
                     if isinstance(v, (str, int, float))})
SET_KEYS = sorted({k for k, _ in SET_LEAVES} | {"run.bin", "run.seed", "nosuch.key", "link", "a..b",
                                                "run.duration.x"})


def _renumbered(leaf: tuple[str, str], number: str) -> str:
    """`KEY=VALUE` with the leading number of the value replaced (`link.x.rate=7.5 Mbit/s`)."""
    key, value = leaf
    rest = value.lstrip("0123456789.+-eE_")
    return f"{key}={number}{rest}" if rest != value else f"{key}={value}"

set_value = st.one_of(
    st.builds(lambda n, u: f"{n}{u}", edge_number, st.sampled_from(UNITS)),
    st.builds(lambda n, u: f"{n}{u}", st.floats(0, 1000).map(lambda v: f"{v:.3g}"), st.sampled_from(UNITS)),
    st.sampled_from(["true", "false", "[]", "{}", "[1, 2]", '{ model = "normal", mean = "1 ms", cv = 1e9 }',
                     "udp", "tcp", "quic", "cubic", "bbr", "nosuch", "'", '"', "[", "{"]),
    text_field,
)
plausible_number = st.one_of(st.floats(0, 500).map(lambda v: f"{v:.3g}"), st.integers(0, 200).map(str))
nearby_option = st.builds(_renumbered, st.sampled_from(SET_LEAVES), st.one_of(plausible_number, edge_number))
set_option = st.one_of(
    nearby_option, nearby_option, nearby_option,
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(SET_KEYS), set_value),
    st.text(max_size=12),
)


def run_cli(args: list[str]) -> tuple[int, str]:
    """`multiconn ARGS` in this process: the exit code and what it wrote to stderr."""
    from multiconn.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's own usage errors
            code = int(exc.code or 0)
    return code, err.getvalue()


@pytest.mark.native
@pytest.mark.e2e
@fuzz_settings(short_cases=40)
@given(st.sampled_from(SCENARIOS), st.lists(set_option, min_size=0, max_size=3))
def test_run_with_overrides_succeeds_or_fails_with_one_line(scenario: Path, options: list[str]) -> None:
    progress("run --set")
    with tempfile.TemporaryDirectory() as folder, time_bound():
        args = ["run", str(scenario), "--out", folder, "--quiet"]
        for option in options:
            args += ["--set", option]
        # A short run: the last override wins.
        args += ["--set", "run.duration=200 ms"]
        code, err = run_cli(args)
    lines = err.strip().splitlines()
    event(f"exit code {code}")
    assert "Traceback" not in err, err
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("multiconn: error: "), err
    elif code == 1:
        # Only the watchdog may end a run with 1 (a model stalled): never an internal error.
        assert "stalled" in err and "internal error" not in err, err
    else:
        assert code == 0, (code, err)


# -- regressions: inputs the fuzzers found -------------------------------------------------------


@pytest.mark.native
@pytest.mark.parametrize("bad", [{"from": 0, "to": math.nan, "step": 1}, {"from": 0, "to": math.inf, "step": 1},
                                 {"from": -math.inf, "to": 0, "step": 1}, {"from": 0, "to": 1, "step": math.inf},
                                 {"from": 0, "to": math.nan, "count": 3}, {"from": 1, "to": math.inf, "count": 3, "scale": "log"},
                                 {"from": -1e308, "to": 1e308, "step": 1}, {"from": -1e308, "to": 1e308, "count": 3},
                                 {"from": 0, "to": 1, "step": 5e-324}, {"from": 5e-324, "to": 1e308, "count": 3, "scale": "log"}])
def test_a_range_with_an_infinite_or_nan_end_is_a_sweep_error(bad: dict[str, Any]) -> None:
    # NaN and infinite ends raised ValueError and OverflowError (an internal error in the CLI)
    # or gave NaN values; so did ranges whose span or step overflows.
    text = tomli_w.dumps({"experiment": {"name": "x", "scenario": "scenarios/download.toml"},
                          "params": {"link.path.rate": bad}})
    with pytest.raises(SweepError, match=r"params\.link\.path\.rate"):
        parse_sweep_text(text, str(CATALOG / "x.toml"))

