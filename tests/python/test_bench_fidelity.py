"""The fidelity table's script (bench/fidelity.py), without root: Jain's index and the fairness
window from a time series, the V2X quantities from a message table, the rows' differences, the
"N of M rows within 10 %" line and how a partial run updates docs/fidelity.md."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT


def _fidelity():
    spec = importlib.util.spec_from_file_location("fidelity", ROOT / "bench" / "fidelity.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["fidelity"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


fidelity = _fidelity()


def test_jains_index_is_one_for_equal_rates_and_one_over_n_when_one_flow_takes_all() -> None:
    assert fidelity.jain([12.0, 12.0, 12.0]) == pytest.approx(1.0)
    assert fidelity.jain([30.0, 0.0, 0.0]) == pytest.approx(1 / 3)
    assert fidelity.jain([1.0, 2.0, 3.0]) == pytest.approx(36 / 42)
    # The study's high-delay-ratio fairness point: DC 1.65, leg flows 11.62 and 17.04 Mbit/s.
    assert fidelity.jain([1.65, 11.62, 17.04]) == pytest.approx(30.31 ** 2 / (3 * (1.65 ** 2 + 11.62 ** 2 + 17.04 ** 2)))
    with pytest.raises(ValueError):
        fidelity.jain([0.0, 0.0])


def _bearer_rows(bytes_per_bin: dict[str, list[int]], bin_s: float = 0.1) -> pd.DataFrame:
    rows = []
    for name, values in bytes_per_bin.items():
        for k, b in enumerate(values):
            rows.append({"time_s": round(k * bin_s, 6), "kind": "bearer", "name": name, "bytes_delivered": b})
            rows.append({"time_s": round(k * bin_s, 6), "kind": "flow", "name": name, "bytes_delivered": 10 * b})
    return pd.DataFrame(rows)


def test_the_fairness_window_starts_at_the_first_delivered_byte_and_counts_bearer_bytes_only() -> None:
    # Nothing in the first three bins (the clients starting), then 1250 B a bin for flow a and
    # 2500 for b; the window of 0.5 s takes bins 0.3 to 0.7, not the bin at 0.8.
    ts = _bearer_rows({"a": [0, 0, 0, 1250, 1250, 1250, 1250, 1250, 99_999],
                       "b": [0, 0, 0, 0, 2500, 2500, 2500, 2500, 99_999]})
    rates = fidelity.window_rates(ts, 0.5)
    assert rates["a"] == pytest.approx(5 * 1250 * 8 / 0.5 / 1e6)
    assert rates["b"] == pytest.approx(4 * 2500 * 8 / 0.5 / 1e6)
    values = fidelity.fairness_values({"dc": 1.0, "sc1": 2.0, "sc2": 3.0})
    assert values["jfi"] == pytest.approx(36 / 42) and values["sc2"] == 3.0
    with pytest.raises(ValueError, match="before the window's end"):
        fidelity.window_rates(ts, 1.0)


def test_the_v2x_quantities_are_the_priority_messages_reliability_and_owd() -> None:
    sent = [i * 0.1 for i in range(10)]
    owd = [0.05] * 8 + [0.15, math.nan]
    table = pd.DataFrame({"stream": 3, "kind": "priority", "msg_id": range(10), "size": 1200, "sent_s": sent,
                          "received_s": [s + d for s, d in zip(sent, owd)]})
    background = pd.DataFrame({"stream": 7, "kind": "background", "msg_id": [0], "size": 12500, "sent_s": [0.0],
                               "received_s": [5.0]})
    values = fidelity.v2x_values(pd.concat([table, background], ignore_index=True))
    assert values["reliability"] == pytest.approx(80.0)
    assert values["owd_median"] == pytest.approx(50.0)
    assert math.isinf(values["owd_p99"])  # one of ten lost: the 99th percentile is infinite


def test_a_compared_row_has_each_quantitys_difference_and_bolds_those_beyond_10_percent() -> None:
    sims = [{"jfi": 0.9, "dc": 10.0, "sc1": 15.0, "sc2": 15.0}, {"jfi": 0.9, "dc": 12.0, "sc1": 15.0, "sc2": 15.0}]
    emus = [{"jfi": 0.95, "dc": 13.0, "sc1": 14.0, "sc2": 15.0}, {"jfi": 0.93, "dc": 13.0, "sc1": 14.0, "sc2": 15.0}]
    row = fidelity.compared_row("fairness", "P", "S / s", sims, emus, 321.0)
    assert row["values"]["dc"]["difference"] == pytest.approx(13 / 11 - 1)
    assert row["values"]["jfi"]["emu"] == pytest.approx(0.94)
    line = fidelity.row_line(row)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:5] == ["P", "S / s", "0.9000 ± 0.0000", "0.9400 ± 0.0141", "+4%"]
    assert cells[5:8] == ["11.00 ± 1.41", "13.00 ± 0.00", "**+18%**"]
    assert cells[8:11] == ["15.00 ± 0.00", "14.00 ± 0.00", "-7%"]
    assert cells[-1] == "321"
    assert len(cells) == len(fidelity._cells(fidelity.table_header("fairness")))
    # An infinite quantity has no difference.
    inf = fidelity.compared_row("v2x", "V", "S / s", [{"reliability": 99.0, "owd_median": 50.0, "owd_p99": 60.0}],
                                [{"reliability": 98.0, "owd_median": 51.0, "owd_p99": math.inf}], 0.0)
    assert inf["values"]["owd_p99"]["difference"] is None
    assert "| 60.0 ± 0.0 | ∞ | — |" in fidelity.row_line(inf)


DOC = """# Fidelity

Intro.

| point | real stack / profile | simulated Mbit/s | emulated Mbit/s | difference | emulator p99 lateness µs |
|---|---|---|---|---|---|
| DC batch 10 | kernel TCP CUBIC / linux-tcp | 30.56 ± 1.35 | 31.89 ± 1.42 | +4% | 744 |
| DC batch 10 | ngtcp2 CUBIC / ngtcp2-0.12 | 37.06 ± 0.02 | 36.99 ± 0.05 | -0% | 155 |
| DC batch 10 | ngtcp2 CUBIC / ngtcp2 (1.x) | 31.07 ± 0.07 | 36.99 ± 0.05 | **+19%** | 155 |
| DC batch 10 | aioquic NewReno / aioquic-1.7 | 24.23 ± 0.47 | — | — | 460 |
| two paths 20 + 10 Mbit/s | kernel MPTCP / linux-mptcp-5.15 | 26.57 ± 0.00 | 27.40 ± 0.01 | +3% | 170 |

<!-- notes -->

## What is known of the differences

| a | b |
|---|---|
| not | counted |
"""


def test_the_summary_counts_the_rows_whose_every_difference_is_within_10_percent(tmp_path: Path) -> None:
    lines = fidelity.with_summary(DOC.split("\n"))
    summary = [line for line in lines if fidelity.SUMMARY_PATTERN.match(line)]
    # Within: +4 %, -0 %, +3 %; not: the bold +19 % and the row without an emulated side.
    assert summary == ["**3 of 5 rows within 10 %** (downloads 3 of 5; against the profile of the version the "
                       "emulator runs 3 of 4): a row counts when every difference in it is at most 10 %."]
    at = lines.index(summary[0])
    assert lines[at - 2:at + 3] == ["Intro.", "", summary[0], "", fidelity.table_header("goodput").replace(
        " (worst run)", "")]
    assert fidelity.with_summary(lines) == lines  # computed again, it stays one line in the same place


def test_a_partial_run_adds_its_tables_before_the_notes_and_keeps_the_summary_current(tmp_path: Path) -> None:
    doc = tmp_path / "fidelity.md"
    doc.write_text("\n".join(fidelity.with_summary(DOC.split("\n"))))
    fair = fidelity.compared_row("fairness", "DC fairness X", "ngtcp2 CUBIC, default buffers / ngtcp2-0.12",
                                 [{"jfi": 0.9, "dc": 10.0, "sc1": 15.0, "sc2": 15.0}],
                                 [{"jfi": 0.91, "dc": 10.5, "sc1": 15.5, "sc2": 14.0}], 200.0)
    good = {"kind": "goodput", "point": "DC batch 10", "stack": "aioquic NewReno / aioquic-1.7", "sim_mbps": 24.23,
            "sim_sd": 0.47, "emu_mbps": 25.0, "emu_sd": 1.0, "difference": 25.0 / 24.23 - 1, "p99_us": 300.0}
    new_point = dict(good, point="DC duplication, no loss", stack="ngtcp2 CUBIC / ngtcp2-0.12", difference=0.5)
    other_version = dict(new_point, stack="ngtcp2 CUBIC / ngtcp2 (1.x)", difference=0.05)
    fidelity.update_rows(doc, [fair, good, new_point, other_version])
    lines = doc.read_text().split("\n")
    tables = fidelity.tables_of(lines)
    assert set(tables) == {"goodput", "fairness"}
    notes = lines.index("<!-- notes -->")
    assert tables["goodput"][1] < tables["fairness"][0] < notes
    assert lines[tables["fairness"][0] - 4] == fidelity.TABLES["fairness"]["heading"]
    goodput_rows = lines[tables["goodput"][0] + 2:tables["goodput"][1]]
    # The aioquic row replaced in place; the new DC point after the last DC row, before the two paths.
    assert goodput_rows[3].startswith("| DC batch 10 | aioquic NewReno / aioquic-1.7 | 24.23 ± 0.47 | 25.00 ± 1.00 | +3% |")
    # The new point's rows in the order they came (the profile of the emulated version first).
    assert goodput_rows[4].startswith("| DC duplication, no loss | ngtcp2 CUBIC / ngtcp2-0.12 |")
    assert goodput_rows[5].startswith("| DC duplication, no loss | ngtcp2 CUBIC / ngtcp2 (1.x) |")
    assert goodput_rows[6].startswith("| two paths")
    assert len(goodput_rows) == 7
    summary = [line for line in lines if fidelity.SUMMARY_PATTERN.match(line)]
    assert len(summary) == 1 and summary[0].startswith(
        "**6 of 8 rows within 10 %** (downloads 5 of 7, fairness 1 of 1; against the profile of the version "
        "the emulator runs 5 of 6)")
    # The same rows again change nothing.
    before = doc.read_text()
    fidelity.update_rows(doc, [fair, good, new_point, other_version])
    assert doc.read_text() == before


def test_the_stack_watch_counts_the_cpu_time_of_the_processes_this_one_starts() -> None:
    watch = fidelity.StackWatch()
    watch.start()
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                    "while time.process_time() - t < 1.2: pass"], check=True)
    ran, waited = watch.totals()
    assert 0.5 < ran < 5.0
    assert waited >= 0.0


def test_the_docs_table_has_its_summary_line_and_every_table_is_recognised() -> None:
    lines = (ROOT / "docs" / "fidelity.md").read_text().split("\n")
    assert [line for line in lines if fidelity.SUMMARY_PATTERN.match(line)] == [fidelity.summary_text(lines)]
    assert set(fidelity.tables_of(lines)) == {"goodput", "fairness", "v2x"}
