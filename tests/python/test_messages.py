"""Message-level metrics (seed 004's definitions) against hand-computed values: OWD,
reliability with lost messages, the 99.9th percentile with +inf, the CCDF, the ideal
reference, bandwidth efficiency, per-kind summaries and the CCDF plot."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pytest  # noqa: E402
from multiconn import messages  # noqa: E402
from multiconn.messages import MessagesError  # noqa: E402

NAN = math.nan


def table(owd_ms: list[float], *, kind: str = "priority", stream: int = 1, size: int = 1200,
          period_s: float = 0.1, best_ms: list[float] | None = None) -> pd.DataFrame:
    """Messages sent every `period_s` with the given OWDs in ms (NaN: never received)."""
    sent = np.arange(len(owd_ms)) * period_s
    frame = pd.DataFrame({
        "stream": stream, "kind": kind, "msg_id": np.arange(len(owd_ms)), "size": size,
        "sent_s": sent, "received_s": sent + np.asarray(owd_ms, dtype=float) / 1e3,
    })
    if best_ms is not None:
        frame["path_owd_min_s"] = np.asarray(best_ms, dtype=float) / 1e3
    return frame


# ten priority messages: eight within 100 ms, one late (150 ms), one lost
TEN = table([10, 20, 30, 40, 50, 60, 70, 80, 150, NAN])


def test_owd_is_received_minus_sent_and_inf_when_lost() -> None:
    delay = messages.owd(TEN)
    assert delay.name == "owd_s"
    np.testing.assert_allclose(delay[:9], [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.15])
    assert delay.iloc[9] == math.inf


def test_reliability_counts_lost_messages_as_failures() -> None:
    assert messages.reliability(TEN, 0.100) == pytest.approx(8 / 10)
    assert messages.reliability(TEN, 0.200) == pytest.approx(9 / 10)  # never 1: one is lost
    assert messages.reliability(TEN, 0.005) == 0.0


def test_reliability_is_strictly_below_the_deadline() -> None:
    # 0.6 - 0.5 is 0.09999999999999998 in binary floating point: OWDs are rounded to the
    # nanosecond first, so a message taking exactly the deadline fails it
    frame = TEN.iloc[:1].assign(sent_s=0.5, received_s=0.6)
    assert messages.owd(frame).iloc[0] == 0.1
    assert messages.reliability(frame, 0.1) == 0.0
    assert messages.reliability(TEN, 0.080) == pytest.approx(7 / 10)  # 80 ms is not < 80 ms


def test_999th_percentile_is_finite_with_one_loss_in_1000_and_inf_with_two() -> None:
    owd_ms = list(range(1, 1001))  # 1 ms ... 1000 ms
    assert messages.owd_quantile(table(owd_ms), 0.999) == pytest.approx(0.999)
    one_lost = table(owd_ms[:999] + [NAN])
    assert messages.owd_quantile(one_lost, 0.999) == pytest.approx(0.999)
    assert messages.owd_quantile(one_lost, 1.0) == math.inf
    two_lost = table(owd_ms[:998] + [NAN, NAN])
    assert messages.owd_quantile(two_lost, 0.999) == math.inf
    assert messages.owd_quantile(two_lost, 0.998) == pytest.approx(0.998)


def test_quantile_is_the_inverse_of_the_empirical_cdf_without_interpolation() -> None:
    four = table([40, 10, 30, 20])
    assert messages.owd_quantile(four, 0.5) == pytest.approx(0.020)
    assert messages.owd_quantile(four, 0.51) == pytest.approx(0.030)
    assert messages.owd_quantile(four, 0.0) == pytest.approx(0.010)
    assert messages.owd_quantile(four, 1.0) == pytest.approx(0.040)
    assert messages.owd_quantile(TEN, 0.9) == pytest.approx(0.150)
    with pytest.raises(MessagesError, match="between 0 and 1"):
        messages.owd_quantile(four, 99.9)


def test_ccdf_of_a_small_example() -> None:
    x, p = messages.ccdf(table([20, 10, 50, 20, NAN]))
    np.testing.assert_allclose(x, [0.010, 0.020, 0.050])
    np.testing.assert_allclose(p, [0.8, 0.4, 0.2])  # levels off at the loss ratio


def test_ccdf_reaches_zero_without_losses_and_is_monotone() -> None:
    rng = np.random.default_rng(3)
    owd_ms = list(rng.gamma(2.0, 20.0, 2000).round(1))
    lost = [NAN if i % 97 == 0 else v for i, v in enumerate(owd_ms)]
    for frame in (table(owd_ms), table(lost)):
        x, p = messages.ccdf(frame)
        assert (np.diff(x) > 0).all() and (np.diff(p) <= 0).all()
        assert ((p >= 0) & (p <= 1)).all()
        # P(OWD > x) = 1 - P(OWD <= x) for every x, losses included
        delay = messages.owd(frame).to_numpy()
        for i in range(0, len(x), 97):
            assert p[i] == pytest.approx(np.mean(delay > x[i]))
    assert messages.ccdf(table(owd_ms))[1][-1] == 0
    assert messages.ccdf(table(lost))[1][-1] == pytest.approx(21 / 2000)


def test_ccdf_with_nothing_received_is_empty() -> None:
    x, p = messages.ccdf(table([NAN, NAN]))
    assert x.size == 0 and p.size == 0


def test_ideal_reference_uses_the_smallest_path_owd() -> None:
    frame = table([10, 150, NAN, 90], best_ms=[10, 40, 60, NAN])
    best = messages.ideal(frame)
    np.testing.assert_allclose(messages.owd(best), [0.010, 0.040, 0.060, math.inf])
    assert messages.reliability(frame, 0.1) == 0.5
    assert messages.reliability(best, 0.1) == 0.75
    with pytest.raises(MessagesError, match="path_owd_min_s"):
        messages.ideal(TEN)


def test_bandwidth_efficiency() -> None:
    # the seed's numbers: 96 % for the selective redundant scheduler, ~47 % for redundant
    assert messages.bandwidth_efficiency(96, 100) == pytest.approx(0.96)
    assert messages.bandwidth_efficiency(2.5e6, 5.3e6) == pytest.approx(0.4717, abs=1e-4)
    assert messages.bandwidth_efficiency(100, 100) == 1.0
    assert math.isnan(messages.bandwidth_efficiency(0, 0))
    with pytest.raises(MessagesError, match="exceeds throughput"):
        messages.bandwidth_efficiency(101, 100)
    with pytest.raises(MessagesError, match="throughput"):
        messages.bandwidth_efficiency(1, -5)


def test_summarise_per_kind() -> None:
    background = table([200, 300, NAN, 100], kind="background", stream=2, size=12500)
    frame = pd.concat([background, TEN], ignore_index=True)
    summary = messages.summarise(frame, 0.100, duration_s=2.0)
    assert list(summary) == ["priority", "background"]
    prio = summary["priority"]
    assert (prio["messages"], prio["received"], prio["lost"]) == (10, 9, 1)
    assert prio["loss_ratio"] == pytest.approx(0.1)
    assert prio["reliability"] == pytest.approx(0.8)
    assert prio["owd_mean_s"] == pytest.approx((360 + 150) / 9 / 1e3)
    assert prio["owd_median_s"] == pytest.approx(0.050)
    assert prio["owd_max_s"] == pytest.approx(0.150)
    assert prio["owd_p99_s"] == math.inf and prio["owd_p999_s"] == math.inf
    assert (prio["bytes_sent"], prio["bytes_received"]) == (12000, 10800)
    assert prio["goodput_mbps"] == pytest.approx(10800 * 8 / 2.0 / 1e6)
    back = summary["background"]
    assert (back["messages"], back["lost"], back["bytes_received"]) == (4, 1, 37500)
    assert back["reliability"] == 0.0  # 100 ms is not below the 100 ms deadline
    assert "ideal_reliability" not in prio


def test_summarise_counts_expired_messages_apart_from_lost_ones() -> None:
    frame = table([50, NAN, NAN, 60, NAN])
    frame["expired_s"] = [NAN, 0.16, NAN, NAN, NAN]
    prio = messages.summarise(frame, 0.100)["priority"]
    assert (prio["messages"], prio["received"], prio["lost"], prio["expired"]) == (5, 2, 2, 1)
    assert prio["loss_ratio"] == pytest.approx(0.6)
    assert prio["reliability"] == pytest.approx(0.4)
    # Without the column nothing is expired.
    assert messages.summarise(frame.drop(columns="expired_s"), 0.100)["priority"]["lost"] == 3


def test_summarise_adds_the_ideal_reference_when_the_column_is_there() -> None:
    frame = table([10, 150, NAN, 90], best_ms=[10, 40, 60, NAN])
    entry = messages.summarise(frame, 0.1)["priority"]
    assert entry["reliability"] == 0.5 and entry["ideal_reliability"] == 0.75
    assert entry["ideal_owd_p999_s"] == math.inf


def test_a_pyarrow_table_gives_the_same_results() -> None:
    arrow = pa.Table.from_pandas(TEN)
    assert messages.reliability(arrow, 0.1) == messages.reliability(TEN, 0.1)
    assert messages.summarise(arrow, 0.1) == messages.summarise(TEN, 0.1)


@pytest.mark.parametrize(("frame", "words"), [
    (TEN.drop(columns=["received_s"]), ["received_s"]),
    (TEN.assign(received_s=TEN["sent_s"] - 0.01), ["before it was sent", "stream 1"]),
    (TEN.assign(sent_s=NAN), ["sent_s"]),
    (TEN.iloc[:0], ["empty"]),
])
def test_bad_tables_are_refused_with_a_reason(frame: pd.DataFrame, words: list[str]) -> None:
    with pytest.raises(MessagesError) as caught:
        messages.reliability(frame, 0.1)
    for word in words:
        assert word in str(caught.value)


def test_bad_deadline_and_input_type() -> None:
    with pytest.raises(MessagesError, match="deadline"):
        messages.reliability(TEN, 0)
    with pytest.raises(TypeError, match="DataFrame"):
        messages.owd([1, 2, 3])


def test_plot_ccdf_draws_log_scale_curves_deadline_and_ideal() -> None:
    lossy = table([10, 20, 20, 50, NAN], best_ms=[5, 10, 10, 10, 20])
    clean = table([15, 25, 35])
    fig, ax = plt.subplots()
    try:
        messages.plot_ccdf(ax, {"lossy": lossy, "clean": clean}, 0.1, ideal_from=lossy)
        assert ax.get_yscale() == "log"
        assert ax.get_xlabel() == "one-way delay [ms]"
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"lossy", "clean", "ideal", "deadline 100 ms"}
        assert list(lines["deadline 100 ms"].get_xdata()) == [100.0, 100.0]
        x, y = lines["lossy"].get_xdata(), lines["lossy"].get_ydata()
        assert y[0] == 1.0 and x[0] == pytest.approx(10.0)
        assert y[-1] == pytest.approx(0.2) and x[-1] == pytest.approx(100.0)  # loss plateau
        assert lines["clean"].get_ydata()[-1] == 0.0
        assert lines["ideal"].get_linestyle() == "--"
        np.testing.assert_allclose(lines["ideal"].get_xdata()[:3], [5.0, 5.0, 10.0])
        assert ax.get_ylim()[0] < 0.2
    finally:
        plt.close(fig)


def test_plot_ccdf_filters_by_kind() -> None:
    mixed = pd.concat([TEN, table([500], kind="background", stream=2)], ignore_index=True)
    fig, ax = plt.subplots()
    try:
        messages.plot_ccdf(ax, {"prio": mixed}, kind="priority")
        assert max(ax.get_lines()[0].get_xdata()) == pytest.approx(150.0)
        with pytest.raises(MessagesError, match="no messages of kind"):
            messages.plot_ccdf(ax, {"x": TEN}, kind="background")
    finally:
        plt.close(fig)


LOSSY_MESSAGES = """
name = "lossy_messages"
[run]
duration = "30 s"
[[link]]
name = "l"
between = ["server", "ue"]
rate = "100 Mbit/s"
delay = "12 ms"
queue = "100 packets"
loss = "5 %"
[[flow]]
name = "streams"
from = "server"
to = "ue"
transport = "quic"
cc = "newreno"
app = "{app}"
{messages}
"""


@pytest.mark.native
@pytest.mark.parametrize("seed", [19, 33, 46, 62])
def test_a_messages_flow_completes_its_handshake_after_losses_as_a_bulk_flow_does(
        tmp_path, seed: int) -> None:
    # A messages flow's server sends 0.5-RTT data at once, which fills the congestion window
    # with packets the client cannot acknowledge before the handshake completes. With these
    # seeds a server Handshake packet is lost: its CRYPTO data must still be sent again
    # (it may exceed the window, as in ngtcp2), or the handshake never completes.
    import multiconn

    source = ('messages = [{ name = "s0", kind = "background", size = "512 B", '
              'interval = "300 us" }]')
    handshakes = {}
    for app, messages in (("bulk", ""), ("messages", source)):
        path = tmp_path / f"{app}.toml"
        path.write_text(LOSSY_MESSAGES.format(app=app, messages=messages))
        handshakes[app] = multiconn.run(path, seed=seed).summary["flows"][0]["handshake_s"]
    assert handshakes["bulk"] is not None
    assert handshakes["messages"] is not None
    # Lost only once: it completes within a few round trips and a PTO, not seconds later.
    assert handshakes["messages"] < 1.5, handshakes
