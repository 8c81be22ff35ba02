"""Message tables in sweeps: stored per run, read back with `load_messages`, drawn by the
`ccdf` plot (pooled over repetitions, deadline line, ideal reference)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from multiconn import load, load_messages, messages, run, run_sweep
from multiconn.sweep.report import ccdf as report_ccdf
from multiconn.sweep.report import figures as report_figures
from multiconn.sweep.report import write_report

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
V2X = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "v2x_two_paths.toml"
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"

SHORT = {
    "run.duration": "5 s",
    "flow.v2x.messages.priority.duration": "3 s",
    "flow.v2x.messages.background.duration": "3 s",
    "link.op_a.loss": "2 %",
    "link.op_b.loss": "2 %",
}

SWEEP = f'''
[experiment]
name = "msgs"
scenario = "{V2X}"
repetitions = 2

[set]
{"".join(f'"{k}" = "{v}"{chr(10)}' for k, v in SHORT.items())}
[[axis]]
name = "scheduler"
[[axis.variant]]
label = "SRTTF"
set = {{ "flow.v2x.multipath.scheduler" = "minrtt" }}
[[axis.variant]]
label = "SRE"
set = {{ "flow.v2x.multipath.scheduler" = "selective_redundant" }}

[metrics]
flow = ["messages.priority.reliability"]

[[plot]]
name = "owd"
kind = "ccdf"
series = "scheduler"
ideal = true

[[plot]]
name = "background"
kind = "ccdf"
message_kind = "background"
deadline = "300 ms"
where = {{ scheduler = "SRE" }}
'''


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("msgs")
    path = folder / "msgs.toml"
    path.write_text(SWEEP)
    summary = run_sweep(path, folder / "out", jobs=1)
    assert summary.failed == 0, summary.failures
    return folder / "out"


def test_every_run_stores_its_message_table(store: Path) -> None:
    frame = load(store)
    keys = set(frame["run_key"])
    assert len(keys) == 4
    assert {p.stem for p in (store / "messages").glob("*.parquet")} == keys


def test_load_messages_gives_back_the_run_s_own_table(store: Path) -> None:
    frame = load(store)
    row = frame[(frame["scheduler"] == "SRE") & (frame["rep"] == 1)].iloc[0]
    stored = load_messages(store, row["run_key"])
    direct = run(V2X, seed=int(row["seed"]),
                 overrides={**SHORT, "flow.v2x.multipath.scheduler": "selective_redundant"})
    assert direct.messages is not None
    pd.testing.assert_frame_equal(stored, direct.messages)
    assert list(stored.columns) == ["flow", "source", "kind", "stream", "msg_id", "size",
                                    "sent_s", "received_s", "path_owd_min_s", "expired_s"]
    assert set(stored["kind"]) == {"priority", "background"}
    # The table agrees with the run's summary.
    priority = stored[stored["kind"] == "priority"]
    assert messages.reliability(priority, 0.1) == pytest.approx(
        row["messages.priority.reliability"])


def test_load_messages_names_a_run_without_a_table(store: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no message table for run nope in"):
        load_messages(store, "nope")
    sweep = tmp_path / "bulk.toml"
    sweep.write_text(f'[experiment]\nname = "bulk"\nscenario = "{BULK}"\n'
                     '[set]\n"run.duration" = "1 s"\n')
    run_sweep(sweep, tmp_path / "out", jobs=1)
    key = load(tmp_path / "out")["run_key"].iloc[0]
    assert not (tmp_path / "out" / "messages").exists()
    with pytest.raises(FileNotFoundError, match='only runs with app = "messages" flows'):
        load_messages(tmp_path / "out", key)


@pytest.fixture(scope="module")
def drawn(store: Path) -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    save = report_figures.save_figure

    def keep(fig: Figure, folder: Path, stem: str) -> None:
        figures[stem] = fig
        save(fig, folder, stem)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_figures, "save_figure", keep)
        write_report(store)
    return figures


def test_ccdf_pools_the_repetitions_of_each_series(drawn: dict[str, Figure],
                                                   store: Path) -> None:
    ax = drawn["msgs-owd"].axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "one-way delay (ms)"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["SRTTF", "SRE", "ideal", "deadline 100 ms"]
    assert list(lines["deadline 100 ms"].get_xdata()) == [100.0, 100.0]
    frame = load(store)
    for label in ("SRTTF", "SRE"):
        keys = frame[frame["scheduler"] == label]["run_key"]
        pooled = pd.concat([load_messages(store, k) for k in keys], ignore_index=True)
        x, p = messages.ccdf(pooled[pooled["kind"] == "priority"])
        drawn_x = np.asarray(lines[label].get_xdata(), dtype=float)
        drawn_p = np.asarray(lines[label].get_ydata(), dtype=float)
        # The curve starts at 1 just before the smallest delay, then steps through the CCDF.
        assert drawn_p[0] == 1.0
        np.testing.assert_allclose(drawn_x[1:len(x) + 1], x * 1e3)
        np.testing.assert_allclose(drawn_p[1:len(p) + 1], p)
        assert len(pooled[pooled["kind"] == "priority"]) == 2 * 30  # two repetitions


def test_ccdf_ideal_is_the_smallest_path_delay_of_each_message(drawn: dict[str, Figure],
                                                                store: Path) -> None:
    ideal = drawn["msgs-owd"].axes[0].get_lines()[2]
    assert ideal.get_linestyle() == "--"
    pooled = pd.concat([load_messages(store, k) for k in load(store)["run_key"]])
    best = pooled[pooled["kind"] == "priority"]["path_owd_min_s"]
    # Two equal 50 ms paths: every message's best is 50 ms plus its serialisation.
    assert best.notna().all() and 0.050 < best.min() <= best.max() < 0.051
    drawn_x = set(np.round(np.asarray(ideal.get_xdata(), dtype=float), 6))
    assert drawn_x == set(np.round(best.to_numpy() * 1e3, 6))


def test_ccdf_ideal_needs_the_path_delay_column() -> None:
    table = pd.DataFrame({"kind": ["priority"], "sent_s": [1.0], "received_s": [1.1]})
    with pytest.raises(report_ccdf.Unavailable, match="no path_owd_min_s column"):
        report_ccdf._ideal_source({"a": table})
    with pytest.raises(report_ccdf.Unavailable, match="split bearers"):
        report_ccdf._ideal_source({"a": table.assign(path_owd_min_s=np.nan)})


def test_ccdf_of_another_kind_with_its_own_deadline(drawn: dict[str, Figure]) -> None:
    ax = drawn["msgs-background"].axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["v2x", "deadline 300 ms"]
    assert ax.get_title().startswith("One-way delay CCDF of background messages")
