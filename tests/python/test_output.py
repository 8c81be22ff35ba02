"""Output files without the native module: reproducible Parquet, summary layout, CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from multiconn._native import MESSAGE_COLUMNS, TIMESERIES_COLUMNS
from multiconn.frame import build_frame, build_messages_frame, write_parquet
from multiconn.result import RunResult, json_text, with_wall_time

COLUMNS = {
    "time_s": [0.0, 0.0, 0.1, 0.1],
    "kind": ["flow", "link", "flow", "link"],
    "name": ["bulk", "bottleneck", "bulk", "bottleneck"],
    "direction": ["", "forward", "", "forward"],
    "bytes_delivered": [1500, 1500, 3000, 3000],
    "throughput_mbps": [0.12, 0.12, 0.24, 0.24],
    "queue_packets": [float("nan"), 3.0, float("nan"), 4.0],
}


def test_frame_types_follow_the_values() -> None:
    frame = build_frame(COLUMNS)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["time_s"].dtype == "float64"
    assert frame["bytes_delivered"].dtype == "int64"
    assert frame["queue_packets"].dtype == "float64"
    assert isinstance(frame["name"].dtype, pd.CategoricalDtype)
    assert list(frame["name"]) == COLUMNS["name"]


def test_empty_frame_keeps_the_documented_types() -> None:
    frame = build_frame({"time_s": [], "kind": [], "bytes_delivered": []})
    assert frame["time_s"].dtype == "float64"
    assert frame["bytes_delivered"].dtype == "int64"
    assert isinstance(frame["kind"].dtype, pd.CategoricalDtype)


def test_empty_columns_take_the_types_the_core_declares() -> None:
    frame = build_frame({name: [] for name, _ in TIMESERIES_COLUMNS})
    for name, kind in TIMESERIES_COLUMNS:
        dtype = frame[name].dtype
        assert isinstance(dtype, pd.CategoricalDtype) if kind == "str" else dtype == kind, name
    messages = build_messages_frame({name: [] for name, _ in MESSAGE_COLUMNS})
    assert list(messages.columns) == [name for name, _ in MESSAGE_COLUMNS]
    assert messages["msg_id"].dtype == "int64" and messages["received_s"].dtype == "float64"


def test_parquet_writes_are_byte_identical(tmp_path: Path) -> None:
    write_parquet(build_frame(COLUMNS), tmp_path / "a.parquet")
    write_parquet(build_frame(COLUMNS), tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_parquet_has_no_index_and_no_pandas_metadata(tmp_path: Path) -> None:
    frame = build_frame(COLUMNS)
    write_parquet(frame, tmp_path / "t.parquet")
    parquet = pq.ParquetFile(tmp_path / "t.parquet")
    assert parquet.schema_arrow.names == list(COLUMNS)
    assert b"pandas" not in (parquet.schema_arrow.metadata or {})
    assert parquet.metadata.row_group(0).column(0).compression == "ZSTD"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), frame)


def test_wall_time_goes_right_after_events() -> None:
    summary = with_wall_time({"seed": 1, "events": 10, "flows": []}, 0.5)
    assert list(summary) == ["seed", "events", "wall_time_s", "flows"]
    assert with_wall_time({"seed": 1}, 0.5) == {"seed": 1, "wall_time_s": 0.5}


def test_write_layout(tmp_path: Path) -> None:
    result = RunResult(
        summary={"scenario": "é", "events": 1, "wall_time_s": 0.1},
        timeseries=build_frame(COLUMNS),
        scenario={"name": "é"},
    )
    written = result.write(tmp_path / "new" / "dir")
    assert sorted(p.name for p in written) == ["scenario.json", "summary.json", "timeseries.parquet"]
    raw = (tmp_path / "new" / "dir" / "summary.json").read_bytes()
    assert raw.endswith(b"}\n") and "é".encode() in raw and b'\n  "events": 1,' in raw
    assert json.loads(raw) == result.summary
    assert json_text({"a": 1}) == '{\n  "a": 1\n}\n'
    assert not list((tmp_path / "new" / "dir").glob(".*tmp"))


@pytest.mark.native
@pytest.mark.parametrize("scenario, duration", [
    ("examples/scenarios/bulk.toml", "2 s"),
    ("examples/scenarios/mpquic_handover.toml", "12 s"),
    ("python/multiconn/catalog/scenarios/dc_throughput.toml", "3 s"),
    ("python/multiconn/catalog/scenarios/v2x_two_paths.toml", "3 s"),
])
def test_tables_written_without_pandas_are_the_same_bytes(scenario: str, duration: str) -> None:
    """`NativeTable.arrow()` (no pandas) and the DataFrame path write identical Parquet."""
    from multiconn.frame import NativeTable, build_messages_frame, parquet_bytes
    from multiconn.runner import simulate

    root = Path(__file__).resolve().parents[2]
    finished = simulate(root / scenario, None, {"run.duration": duration})
    assert parquet_bytes(NativeTable(finished.columns)) == parquet_bytes(
        build_frame(finished.columns))
    if finished.messages:
        assert parquet_bytes(NativeTable(finished.messages, messages=True)) == parquet_bytes(
            build_messages_frame(finished.messages))


def test_native_table_types_match_pandas_for_nulls_bools_and_wide_dictionaries() -> None:
    from multiconn.frame import NativeTable, parquet_bytes

    columns = {
        "time_s": [0.0, 0.1, 0.2] * 100,
        "name": [f"flow{i}" for i in range(300)],  # 300 categories: int16 indices
        "bytes_delivered": list(range(300)),
        "srtt_ms": [float("nan"), 1.5, 2.0] * 100,
        "up": [True, False, True] * 100,
    }
    table = NativeTable(columns)
    assert table.arrow().schema.field("name").type.index_type == pa.int16()
    assert table.arrow().column("srtt_ms").null_count == 100
    assert parquet_bytes(table) == parquet_bytes(build_frame(columns))
