"""Per-path, per-leg and per-bearer rows of the time series, as pandas and the files see them:
their dtypes, that they add up to the summary's per-path and per-split totals, and that they
are written byte-identically."""

from __future__ import annotations

from pathlib import Path

import multiconn
import pandas as pd
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.native

# An MP-QUIC download over a link (path 0) and a split (path 1), beside a single-path CBR flow
# of 1500-byte packets through the same split.
MIXED = """
[run]
duration = "3 s"

[[link]]
name = "wifi"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "40 packets"

[[link]]
name = "leg1"
between = ["server", "client"]
rate = "15 Mbit/s"
delay = { model = "normal", mean = "10 ms", cv = 0.3, reorder = true }
queue = "60 packets"

[[link]]
name = "leg2"
between = ["server", "client"]
rate = "15 Mbit/s"
delay = "40 ms"
queue = "60 packets"

[[split]]
name = "dc"
legs = ["leg1", "leg2"]
policy = { model = "ratio", share = 0.5 }
t_reordering = "60 ms"

[[flow]]
name = "mp"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "2 MB"
paths = [["wifi"], ["dc"]]

[[flow]]
name = "cbr"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "4 Mbit/s"
packet_size = "1500 B"
route = ["dc"]
stop = "2.5 s"
"""


@pytest.fixture(scope="module")
def result() -> multiconn.RunResult:
    return multiconn.run(MIXED, seed=3)


def test_the_new_columns_have_their_types_and_empty_values(result) -> None:
    frame = result.timeseries
    assert frame["path"].dtype == "int64"
    assert isinstance(frame["leg"].dtype, pd.CategoricalDtype)
    assert frame["reorder_delay_ms"].dtype == "float64"
    assert frame["reorder_buffer_pdus"].dtype == "float64"
    assert list(frame["kind"].drop_duplicates()) == ["flow", "link", "path", "leg", "bearer"]
    old = frame[frame["kind"].isin(["flow", "link"])]
    assert (old["path"] == -1).all() and (old["leg"] == "").all()
    assert old["reorder_delay_ms"].isna().all() and old["reorder_buffer_pdus"].isna().all()
    # A flow with one path has no path rows; its bearer and legs are on path 0.
    assert frame[(frame["kind"] == "path") & (frame["name"] == "cbr")].empty
    assert set(frame[(frame["kind"] != "path") & (frame["name"] == "cbr") & (frame["kind"] != "flow")]["path"]) == {0}


def test_path_rows_add_up_to_the_summary(result) -> None:
    frame, flow = result.timeseries, result.summary["flows"][0]
    paths = frame[frame["kind"] == "path"].groupby("path")["bytes_delivered"].sum()
    assert list(paths.index) == [0, 1]
    for p, bytes_ in paths.items():
        assert bytes_ == flow["paths"][p]["network"]["forward"]["bytes_arrived"]
    wifi = frame[(frame["kind"] == "link") & (frame["name"] == "wifi") & (frame["direction"] == "forward")]
    assert paths[0] == wifi["bytes_delivered"].sum()


def test_leg_and_bearer_rows_add_up_to_the_split_entries(result) -> None:
    frame, summary = result.timeseries, result.summary
    for name, entry in [("mp", summary["flows"][0]["paths"][1]["pdcp"]["dc"]),
                        ("cbr", summary["flows"][1]["pdcp"]["dc"])]:
        legs = frame[(frame["kind"] == "leg") & (frame["name"] == name)]
        by_leg = legs.groupby("leg", observed=True)["bytes_delivered"].sum()
        assert [d["leg"] for d in entry["per_leg"]] == ["leg1", "leg2"]
        for detail in entry["per_leg"]:
            assert by_leg[detail["leg"]] == detail["bytes_arrived"]
        assert sum(d["pdus_arrived"] for d in entry["per_leg"]) == sum(entry["pdus_arrived"])
        bearer = frame[(frame["kind"] == "bearer") & (frame["name"] == name)]
        assert bearer["drops_pdcp_late"].sum() == entry["late_discards"]
        assert bearer["drops_pdcp_window"].sum() == entry["window_full"]
    # Every CBR SDU has 1500 bytes, so a bin's bytes count its SDUs: the per-bin means,
    # weighted by them, are the summary's mean reordering delay.
    entry = summary["flows"][1]["pdcp"]["dc"]
    bearer = frame[(frame["kind"] == "bearer") & (frame["name"] == "cbr")]
    sdus = bearer["bytes_delivered"] // 1500
    assert (bearer["bytes_delivered"] % 1500 == 0).all()
    assert sdus.sum() == entry["delivered"]
    assert entry["reorder_delay_mean_ms"] > 1
    weighted = (bearer["reorder_delay_ms"].fillna(0) * sdus).sum() / sdus.sum()
    assert weighted == pytest.approx(entry["reorder_delay_mean_ms"], abs=1e-6)
    assert ((bearer["reorder_buffer_pdus"] >= 0) & (bearer["reorder_buffer_pdus"] <= entry["max_buffered"])).all()


def test_files_are_byte_identical_and_keep_the_types(result, tmp_path: Path) -> None:
    result.write(tmp_path / "a", csv=True)
    multiconn.run(MIXED, seed=3).write(tmp_path / "b", csv=True)
    for name in ("timeseries.parquet", "timeseries.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    back = pq.read_table(tmp_path / "a" / "timeseries.parquet").to_pandas()
    assert back["path"].dtype == "int64"
    assert list(back.columns) == [name for name, _ in multiconn._native.TIMESERIES_COLUMNS]
    assert set(back["leg"].astype(str)) == {"", "leg1", "leg2"}
