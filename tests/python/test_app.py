"""The application API (`multiconn.Session`): streams opened from Python with a priority and
a redundancy flag, messages written at chosen virtual times, arrivals read with timestamps,
and the same message table and metrics as the scenario's own sources."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import multiconn
from multiconn import messages

pytestmark = pytest.mark.native

CATALOG = Path(multiconn.__file__).parent / "catalog" / "scenarios"
V2X = CATALOG / "v2x_two_paths.toml"


def app_only() -> str:
    """The catalogue scenario without its periodic sources: the application writes
    everything itself (`messages = []`)."""
    text = V2X.read_text().split("[[flow.messages]]")[0]
    return text.replace('paths = [["op_a"], ["op_b"]]', 'paths = [["op_a"], ["op_b"]]\nmessages = []')


APP_ONLY = {"run.duration": "8 s"}


def test_messages_written_from_python_arrive_one_path_delay_later() -> None:
    session = multiconn.Session(app_only(), seed=1, overrides={**APP_ONLY, "link.op_a.loss": "0 %",
                                                         "link.op_b.loss": "0 %"})
    conn = session.connection("v2x")
    cam = conn.open_stream("cam", kind="priority")
    assert cam.id == 3
    times = [1.0 + 0.1 * k for k in range(50)]
    for k, t in enumerate(times):
        session.run_until(t)
        assert math.isclose(session.now_s, t, abs_tol=1e-9)
        assert cam.write(1200) == k
    session.run_until(7.0)
    arrived = conn.read()
    assert list(arrived["msg_id"]) == list(range(50))
    assert (arrived["source"] == "cam").all() and (arrived["kind"] == "priority").all()
    np.testing.assert_allclose(arrived["sent_s"], times, atol=1e-9)
    owd = arrived["received_s"] - arrived["sent_s"]
    # 50 ms one way plus one packet at 20 Mbit/s; both paths alike.
    assert owd.between(0.050, 0.0515).all(), owd.describe()
    assert conn.read().empty, "each arrival is read once"
    cam.finish()
    result = session.finish()
    assert result.messages is not None and len(result.messages) == 50
    source = result.summary["flows"][0]["messages"]["cam"]
    assert source["reliability"] == 1.0
    assert source["deadline_ms"] == 100.0


def test_reads_between_writes_give_every_arrival_once_in_order() -> None:
    session = multiconn.Session(app_only(), seed=2, overrides=APP_ONLY)
    conn = session.connection("v2x")
    cam = conn.open_stream("cam", kind="priority")
    bulk = conn.open_stream("bulk", kind="background", deadline_s=0.5)
    batches = []
    for k in range(40):
        session.run_until(1.0 + 0.05 * k)
        cam.write(1200)
        if k % 4 == 0:
            bulk.write(12_500)
        if k % 7 == 0:
            batches.append(conn.read())
    session.run_until(7.0)
    batches.append(conn.read())
    read = pd.concat([b.astype({c: str for c in ("flow", "source", "kind")}) for b in batches],
                     ignore_index=True)
    assert read["received_s"].notna().all()
    for batch in batches:
        order = ["received_s", "stream", "msg_id"]
        assert batch[order].equals(batch.sort_values(order)[order].reset_index(drop=True))
    keys = list(zip(read["stream"], read["msg_id"]))
    assert len(keys) == len(set(keys)) == 50, "every message once"
    table = session.messages()
    received = table[table["received_s"].notna()].sort_values(["stream", "msg_id"])
    got = read.sort_values(["stream", "msg_id"])
    np.testing.assert_array_equal(got["received_s"], received["received_s"])
    np.testing.assert_array_equal(got["size"], received["size"])
    cam.finish()
    bulk.finish()
    sources = session.finish().summary["flows"][0]["messages"]
    # The kinds' defaults come from the simulator: priority streams are due within 100 ms,
    # background streams have no deadline unless given one.
    assert sources["cam"]["deadline_ms"] == 100.0
    assert sources["bulk"]["deadline_ms"] == 500.0


def test_an_application_writing_on_the_sources_schedule_gets_their_arrivals() -> None:
    # The catalogue scenario's sources, shortened, against the same writes from Python.
    short = {"run.duration": "8 s", "flow.v2x.messages.priority.duration": "5 s",
             "flow.v2x.messages.background.duration": "5 s"}
    reference = multiconn.run(V2X, seed=3, overrides=short).messages
    assert reference is not None
    session = multiconn.Session(app_only(), seed=3, overrides=APP_ONLY)
    conn = session.connection("v2x")
    prio = conn.open_stream("priority", kind="priority")
    back = conn.open_stream("background", kind="background")
    writes = sorted([(t, 0, prio, 1200) for t in reference[reference.kind == "priority"].sent_s]
                    + [(t, 1, back, 12_500) for t in reference[reference.kind == "background"].sent_s],
                    key=lambda w: (w[0], w[1]))
    for t, _, stream, size in writes:
        session.run_until(t)
        stream.write(size)
    prio.finish()
    back.finish()
    session.run_until(8.0)
    mine = session.finish().messages
    assert mine is not None
    cols = ["source", "kind", "stream", "msg_id", "size"]
    pd.testing.assert_frame_equal(mine[cols].astype(str), reference[cols].astype(str))
    np.testing.assert_allclose(mine["sent_s"], reference["sent_s"], atol=1e-9)
    # Same network, same seed, same writes: the same arrivals, up to the packing of the
    # writes that fall on one instant (the sources write them in one step, the application in
    # two): within one packet's transmission time (0.5 ms at 20 Mbit/s).
    np.testing.assert_allclose(mine["received_s"], reference["received_s"], atol=5e-4)


def test_run_results_carry_the_message_table_and_feed_the_metrics(tmp_path: Path) -> None:
    result = multiconn.run(V2X, seed=1, overrides={"run.duration": "12 s",
                                                  "flow.v2x.messages.priority.duration": "10 s",
                                                  "flow.v2x.messages.background.duration": "10 s"})
    table = result.messages
    assert table is not None
    assert list(table.columns) == ["flow", "source", "kind", "stream", "msg_id", "size",
                                   "sent_s", "received_s", "path_owd_min_s", "expired_s"]
    # The ideal reference: 50 ms propagation plus the message at 20 Mbit/s on either path.
    np.testing.assert_allclose(table["path_owd_min_s"], 0.050 + table["size"] * 8 / 20e6)
    stats = messages.summarise(table, deadline_s=0.1)
    flow = result.summary["flows"][0]
    prio = flow["messages"]["priority"]
    assert stats["priority"]["messages"] == prio["messages"] == 100
    assert stats["priority"]["reliability"] == pytest.approx(prio["reliability"])
    assert stats["priority"]["owd_p999_s"] * 1e3 == pytest.approx(prio["owd_p999_ms"])
    assert stats["priority"]["ideal_reliability"] == 1.0
    written = result.write(tmp_path, csv=True)
    names = {p.name for p in written}
    assert {"messages.parquet", "messages.csv"} <= names
    back = pd.read_parquet(tmp_path / "messages.parquet")
    assert len(back) == len(table)
    # A run without message flows has no table and writes none.
    plain = multiconn.run(CATALOG / "download.toml", seed=1)
    assert plain.messages is None


def test_application_mistakes_get_clear_errors() -> None:
    session = multiconn.Session(app_only(), seed=1, overrides=APP_ONLY)
    with pytest.raises(multiconn.ScenarioError, match=r'no flow "nope"; the message flows are: v2x'):
        session.connection("nope").open_stream("x")
    conn = session.connection("v2x")
    with pytest.raises(ValueError, match="kind must be one of priority, background"):
        conn.open_stream("x", kind="urgent")
    with pytest.raises(ValueError, match="priority must be an int"):
        conn.open_stream("x", priority=300)
    with pytest.raises(multiconn.ScenarioError, match="not valid"):
        conn.open_stream("bad name")
    stream = conn.open_stream("x")
    with pytest.raises(ValueError, match="whole number of bytes"):
        stream.write(0)
    session.run_until(2.0)
    with pytest.raises(ValueError, match="only moves forward"):
        session.run_until(1.0)
    stream.finish()
    with pytest.raises(multiconn.ScenarioError, match="was finished"):
        stream.write(10)
    session.finish()
    with pytest.raises(RuntimeError, match="already been finished"):
        stream.write(10)
