"""Building the time-series DataFrame from the native columns, and writing it reproducibly.

Numbers keep their native types (float64, int64); text columns become categoricals. A
column's type comes from its values; the types the core declares for its columns
(`TIMESERIES_COLUMNS`, `MESSAGE_COLUMNS` of `multiconn._native`) are used for empty columns
and for the message table. Parquet files are written so that the same frame always gives the
same bytes: no pandas index or pandas metadata, fixed zstd compression, no timestamps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ._native import MESSAGE_COLUMNS, TIMESERIES_COLUMNS

if TYPE_CHECKING:  # pandas and pyarrow load on first use: `import multiconn` stays quick
    import pandas as pd
    import pyarrow as pa


def _dtypes(columns: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """pandas dtypes of the core's column types: text columns are categoricals."""
    return {name: "category" if kind == "str" else kind for name, kind in columns}


COLUMN_DTYPES: dict[str, str] = _dtypes(TIMESERIES_COLUMNS)
"""The time-series columns and their dtypes, for empty columns (which carry no type of their
own). Queue and transport columns are floats: NaN on rows that have none."""

PARQUET_COMPRESSION = "zstd"
PARQUET_COMPRESSION_LEVEL = 3


def _dtype_of(name: str, values: Sequence[object]) -> str:
    if not len(values):
        return COLUMN_DTYPES.get(name, "category")
    first = values[0]
    if isinstance(first, bool):
        return "bool"
    if isinstance(first, int):
        return "int64"
    if isinstance(first, float):
        return "float64"
    return "category"


def _series(name: str, values: Sequence[object]) -> pd.Series:
    import pandas as pd

    dtype = _dtype_of(name, values)
    if dtype == "category":
        text = pd.Series(list(values), dtype=object, name=name)
        return text.astype(pd.CategoricalDtype(sorted(set(text)))).rename(name)
    return pd.Series(values, dtype=dtype, name=name)


def build_frame(columns: Mapping[str, Sequence[object]]) -> pd.DataFrame:
    """A DataFrame with the columns in the order given."""
    import pandas as pd

    if not columns:
        return pd.DataFrame({name: pd.Series([], dtype=d) for name, d in COLUMN_DTYPES.items()})
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"time-series columns differ in length: {sorted(lengths)}")
    return pd.DataFrame({name: _series(name, values) for name, values in columns.items()})


MESSAGE_DTYPES: dict[str, str] = _dtypes(MESSAGE_COLUMNS)
"""The message table's columns (one row per message; `received_s` NaN: not received;
`path_owd_min_s`: the smallest one-way delay over the paths at the send time, the "ideal"
reference of `multiconn.messages`)."""


def build_messages_frame(columns: Mapping[str, Sequence[object]]) -> pd.DataFrame:
    """The message table as a DataFrame, with the documented dtypes whatever the length."""
    import pandas as pd

    missing = [c for c in MESSAGE_DTYPES if c not in columns]
    if missing:
        raise ValueError(f"message columns missing: {', '.join(missing)}")
    lengths = {len(columns[c]) for c in MESSAGE_DTYPES}
    if len(lengths) > 1:
        raise ValueError(f"message columns differ in length: {sorted(lengths)}")
    out = {}
    for name, dtype in MESSAGE_DTYPES.items():
        values = list(columns[name])
        if dtype == "category":
            text = pd.Series(values, dtype=object, name=name)
            out[name] = text.astype(pd.CategoricalDtype(sorted(set(text))))
        else:
            out[name] = pd.Series(values, dtype=dtype, name=name)
    return pd.DataFrame(out)


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table without index and without pandas metadata."""
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike[str] | pa.NativeFile) -> None:
    """Writes the frame as Parquet, byte-identically for equal frames."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        to_arrow(frame),
        path if isinstance(path, pa.NativeFile) else os.fspath(path),
        compression=PARQUET_COMPRESSION,
        compression_level=PARQUET_COMPRESSION_LEVEL,
        use_dictionary=True,
        write_statistics=True,
        version="2.6",
        data_page_version="1.0",
    )


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """The Parquet file `write_parquet` would write, in memory."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    write_parquet(frame, sink)
    return sink.getvalue().to_pybytes()


def write_csv(frame: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Writes the frame as CSV (no index, '\\n' line ends, shortest round-trip floats)."""
    frame.to_csv(Path(path), index=False, lineterminator="\n", encoding="utf-8")
