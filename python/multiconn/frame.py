"""Building the time-series DataFrame from the native columns, and writing it reproducibly.

Numbers keep their native types (float64, int64); text columns become categoricals. A
column's type comes from its values; the types the core declares for its columns
(`TIMESERIES_COLUMNS`, `MESSAGE_COLUMNS` of `multiconn._native`) are used for empty columns
and for the message table. Parquet files are written so that the same frame always gives the
same bytes: no pandas index or pandas metadata, fixed zstd compression, no timestamps.

A finished simulation hands its tables over as typed buffers ([`native_columns`], one
`NativeColumn` each): Arrow arrays are made on them without a copy, and the Parquet file is
written from those, so a table costs its buffers and never a Python object per value
(columns holding one value in every row share one buffer). Plain lists (the emulator's
table, tests) take the slower route of `_arrow_array`.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
reference of `multiconn.messages`; `expired_s`: when the sender abandoned a message that never
arrived whole, NaN otherwise)."""


def build_messages_frame(columns: Mapping[str, Sequence[object]]) -> pd.DataFrame:
    """The message table as a DataFrame, with the documented dtypes whatever the length."""
    import pandas as pd

    _check_message_columns(columns)
    out = {}
    for name, dtype in MESSAGE_DTYPES.items():
        values = list(columns[name])
        if dtype == "category":
            text = pd.Series(values, dtype=object, name=name)
            out[name] = text.astype(pd.CategoricalDtype(sorted(set(text))))
        else:
            out[name] = pd.Series(values, dtype=dtype, name=name)
    return pd.DataFrame(out)


class NativeColumn:
    """One column as the core hands it over (`Simulation.finish`): `kind` is "float64",
    "int64" or "category"; `data` the values' (or codes') bytes, None when every row holds
    `extra`; `validity` the Arrow bitmap of the non-NaN floats (None: no NaN), `null_count`
    the NaNs; for a category column `extra` is its sorted values. Reads as a sequence of its
    values (`tolist()` gives them as Python objects; the fast paths never do)."""

    __slots__ = ("_length", "data", "extra", "kind", "null_count", "validity")

    def __init__(self, kind: str, data: bytes | None, validity: bytes | None,
                 null_count: int, extra: Any, length: int) -> None:
        self.kind = kind
        self.data = data
        self.validity = validity
        self.null_count = null_count
        self.extra = extra
        self._length = length

    def __len__(self) -> int:
        return self._length

    def _codes_format(self) -> str:
        return _codes_format(len(self.extra))

    def tolist(self) -> list[object]:
        """The values as Python objects (NaN for missing floats)."""
        if self.kind == "category":
            assert self.data is not None
            values = self.extra
            return [values[c] for c in memoryview(self.data).cast(self._codes_format())]
        if self.data is None:
            return [self.extra] * self._length
        return memoryview(self.data).cast("d" if self.kind == "float64" else "q").tolist()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __getitem__(self, index: int) -> object:
        if not -self._length <= index < self._length:
            raise IndexError(index)
        index %= self._length
        if self.kind == "category":
            assert self.data is not None
            return self.extra[memoryview(self.data).cast(self._codes_format())[index]]
        if self.data is None:
            return self.extra
        return memoryview(self.data).cast("d" if self.kind == "float64" else "q")[index]

    def arrow(self, pa: Any, shared: dict[tuple[str, object, int], Any]) -> Any:
        """The Arrow array pandas → Arrow gives for the column (see `_arrow_array`), on the
        column's own bytes; `shared` keeps the buffers of columns of one value, by value."""
        count = self._length
        if self.kind == "category":
            values = self.extra
            index_type = {"b": pa.int8(), "h": pa.int16(), "i": pa.int32()}[self._codes_format()]
            indices = pa.Array.from_buffers(index_type, count, [None, pa.py_buffer(self.data)])
            texts = [str(v).encode("utf-8") for v in values]
            offsets = array("q", [0])
            for text in texts:
                offsets.append(offsets[-1] + len(text))
            dictionary = pa.Array.from_buffers(pa.large_string(), len(values), [
                None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(texts))])
            return pa.DictionaryArray.from_arrays(indices, dictionary)
        fmt = "d" if self.kind == "float64" else "q"
        type_ = pa.float64() if self.kind == "float64" else pa.int64()
        if self.data is None:
            key = (fmt, array(fmt, [self.extra]).tobytes(), count)
            if key not in shared:
                shared[key] = pa.py_buffer(array(fmt, [self.extra]) * count)
            data = shared[key]
            validity = None
            if self.null_count:
                if ("validity", None, count) not in shared:
                    shared[("validity", None, count)] = pa.py_buffer(bytes((count + 7) // 8))
                validity = shared[("validity", None, count)]
        else:
            data = pa.py_buffer(self.data)
            validity = None if self.validity is None else pa.py_buffer(self.validity)
        return pa.Array.from_buffers(type_, count, [validity, data], null_count=self.null_count)

    def series(self, pd: Any, name: str) -> pd.Series:
        """The column as the pandas Series `build_frame` makes of its values."""
        import numpy as np

        if self.kind == "category":
            codes = np.frombuffer(self.data, dtype=np.dtype(self._codes_format()))  # type: ignore[arg-type]
            dtype = pd.CategoricalDtype(list(self.extra))
            return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype), name=name)
        if self.data is None:
            values = np.full(self._length, self.extra, dtype=self.kind)
        else:
            values = np.frombuffer(self.data, dtype="<f8" if self.kind == "float64" else "<i8")
        return pd.Series(values, dtype=self.kind, name=name, copy=True)


def native_columns(columns: Sequence[tuple[str, str, bytes | None, bytes | None, int, Any]]
                   ) -> dict[str, NativeColumn]:
    """The columns `Simulation.finish` hands over, by name, in order."""
    out: dict[str, NativeColumn] = {}
    length = 0
    for name, kind, data, validity, null_count, extra in columns:
        if data is not None:
            length = len(data) // (8 if kind != "category" else
                                   {"b": 1, "h": 2, "i": 4}[_codes_format(len(extra))])
            break
    for name, kind, data, validity, null_count, extra in columns:
        out[name] = NativeColumn(kind, data, validity, null_count, extra, length)
    return out


def _codes_format(width: int) -> str:
    """The array format of the codes of a category column of `width` values: the narrowest
    signed type pandas and Arrow choose (int8, int16, int32)."""
    return "b" if width < 2**7 else "h" if width < 2**15 else "i"


def _is_native(columns: Mapping[str, Sequence[object]]) -> bool:
    return bool(columns) and all(isinstance(v, NativeColumn) for v in columns.values())


class NativeTable:
    """A table as the core hands it over (column name -> values), turned into a DataFrame
    or an Arrow table only when asked: writing Parquet needs pyarrow but not pandas, so
    `multiconn run` and sweep workers never import pandas.

    `arrow()` gives exactly the Arrow table `to_arrow(frame())` gives (same types,
    dictionaries and nulls), so both write the same Parquet bytes."""

    def __init__(self, columns: Mapping[str, Sequence[object]], messages: bool = False) -> None:
        self.columns = columns
        self.messages = messages
        self._frame: pd.DataFrame | None = None

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (built once)."""
        if self._frame is None and _is_native(self.columns):
            import pandas as pd

            if self.messages:
                _check_message_columns(self.columns)
            names = list(MESSAGE_DTYPES) if self.messages else list(self.columns)
            self._frame = pd.DataFrame({
                name: self.columns[name].series(pd, name)  # type: ignore[attr-defined]
                for name in names})
        if self._frame is None:
            self._frame = (build_messages_frame(self.columns) if self.messages
                           else build_frame(self.columns))
        return self._frame

    def arrow(self) -> pa.Table:
        """The table as Arrow, built straight from the columns."""
        import pyarrow as pa

        if self._frame is not None:
            return to_arrow(self._frame)
        if _is_native(self.columns):
            if self.messages:
                _check_message_columns(self.columns)
            names = list(MESSAGE_DTYPES) if self.messages else list(self.columns)
            shared: dict[tuple[str, object, int], Any] = {}
            return pa.Table.from_arrays(
                [self.columns[name].arrow(pa, shared) for name in names],  # type: ignore[attr-defined]
                names=names)
        if self.messages:
            _check_message_columns(self.columns)
            declared: Mapping[str, str] | None = MESSAGE_DTYPES
            names = list(MESSAGE_DTYPES)
        else:
            lengths = {len(v) for v in self.columns.values()}
            if len(lengths) > 1:
                raise ValueError(f"time-series columns differ in length: {sorted(lengths)}")
            if not self.columns:
                return to_arrow(self.frame())
            declared, names = None, list(self.columns)
        arrays = []
        for name in names:
            values = list(self.columns[name])
            dtype = declared[name] if declared else _dtype_of(name, values)
            arrays.append(_arrow_array(pa, dtype, values))
        return pa.Table.from_arrays(arrays, names=names)


def _arrow_array(pa: Any, dtype: str, values: list[object]) -> Any:
    """The Arrow array pandas → Arrow gives for a column of `dtype`: categoricals are
    dictionaries (sorted categories, the narrowest signed index type, large strings), NaN
    floats are nulls. Built from buffers: `pyarrow.array` would import pandas."""
    count = len(values)
    if dtype == "category":
        categories = sorted(set(values))  # type: ignore[type-var]
        code = {c: i for i, c in enumerate(categories)}
        width = len(categories)
        index_type, fmt = ((pa.int8(), "b") if width < 2**7 else
                           (pa.int16(), "h") if width < 2**15 else (pa.int32(), "i"))
        indices = pa.Array.from_buffers(index_type, count, [
            None, pa.py_buffer(array(fmt, [code[v] for v in values]).tobytes())])
        texts = [str(c).encode("utf-8") for c in categories]
        offsets = array("q", [0])
        for text in texts:
            offsets.append(offsets[-1] + len(text))
        dictionary = pa.Array.from_buffers(pa.large_string(), width, [
            None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(texts))])
        return pa.DictionaryArray.from_arrays(indices, dictionary)
    if dtype == "int64":
        return pa.Array.from_buffers(pa.int64(), count,
                                     [None, pa.py_buffer(array("q", values).tobytes())])
    if dtype == "float64":
        nulls = sum(1 for v in values if v != v)
        validity = _bitmap(pa, [v == v for v in values]) if nulls else None
        return pa.Array.from_buffers(pa.float64(), count,
                                     [validity, pa.py_buffer(array("d", values).tobytes())],
                                     null_count=nulls)
    if dtype == "bool":
        return pa.Array.from_buffers(pa.bool_(), count, [None, _bitmap(pa, values)])
    raise ValueError(f"no Arrow type for column dtype {dtype!r}")


def _bitmap(pa: Any, bits: Sequence[object]) -> Any:
    """An Arrow bitmap (least significant bit first) of the truth of `bits`."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(out))


def _check_message_columns(columns: Mapping[str, Sequence[object]]) -> None:
    missing = [c for c in MESSAGE_DTYPES if c not in columns]
    if missing:
        raise ValueError(f"message columns missing: {', '.join(missing)}")
    lengths = {len(columns[c]) for c in MESSAGE_DTYPES}
    if len(lengths) > 1:
        raise ValueError(f"message columns differ in length: {sorted(lengths)}")


def to_arrow(frame: pd.DataFrame | NativeTable) -> pa.Table:
    """The table as an Arrow table without index and without pandas metadata."""
    import pyarrow as pa

    if isinstance(frame, NativeTable):
        return frame.arrow()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_parquet(frame: pd.DataFrame | NativeTable,
                  path: str | os.PathLike[str] | pa.NativeFile) -> None:
    """Writes the table as Parquet, byte-identically for equal tables."""
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


def parquet_bytes(frame: pd.DataFrame | NativeTable) -> bytes:
    """The Parquet file `write_parquet` would write, in memory."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    write_parquet(frame, sink)
    return sink.getvalue().to_pybytes()


def write_csv(frame: pd.DataFrame | NativeTable, path: str | os.PathLike[str]) -> None:
    """Writes the frame as CSV (no index, '\\n' line ends, shortest round-trip floats)."""
    if isinstance(frame, NativeTable):
        frame = frame.frame()
    frame.to_csv(Path(path), index=False, lineterminator="\n", encoding="utf-8")
