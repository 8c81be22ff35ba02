"""Heatmaps, log and explicit y ranges, confidence intervals and throughput-delay plots in
sweep reports.

One small real store: a TCP bulk flow over one bottleneck, two rates × two queue sizes × two
congestion controllers × three repetitions of 300 ms, with time series; and a second
experiment of two V2X message schedulers for the one-way-delay variant of the
throughput-delay plot. The tests read the matplotlib objects of each saved figure (image
cells, error bars, markers, axis scales and limits) and compare them with values computed
from the results table, the time series and the message tables.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from conftest import drawn_figures, record_sweeps
from multiconn.sweep.report.heatmap import cell_text, decimals
from multiconn.sweep.report.stats import ci_half_width, t_cdf, t_quantile
from multiconn.sweep.report.yrange import is_rate
from multiconn.sweep.results import load, load_messages, load_timeseries

pytestmark = pytest.mark.native

ROOT = Path(__file__).resolve().parents[2]
V2X = ROOT / "python" / "multiconn" / "catalog" / "scenarios" / "v2x_two_paths.toml"

RATES = ["10 Mbit/s", "20 Mbit/s"]
QUEUES = ["10 packets", "40 packets"]
SCHEMES = ["cubic", "bbr"]
REPS = 3

TCP_SWEEP = """
[experiment]
name = "tcp"
repetitions = 3

[scenario]
name = "one"
[scenario.run]
duration = "300 ms"
bin = "20 ms"
[[scenario.link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "40 packets"
loss = "0.5 %"
[[scenario.flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"

[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
"link.bottleneck.queue" = ["10 packets", "40 packets"]

[[axis]]
name = "scheme"
param = "flow.bulk.cc"
values = ["cubic", "bbr"]

[metrics]
timeseries = true
flow = ["drops.link_down"]

[[plot]]
name = "heat"
kind = "heatmap"
x = "link.bottleneck.rate"
y = "link.bottleneck.queue"
z = "goodput_mbps"

[[plot]]
name = "log"
kind = "line"
x = "link.bottleneck.rate"
y = "goodput_mbps"
series = "scheme"
where = { "link.bottleneck.queue" = "40 packets" }
logy = true

[[plot]]
name = "narrow"
kind = "line"
x = "link.bottleneck.rate"
y = "goodput_mbps"
series = "scheme"
where = { "link.bottleneck.queue" = "40 packets" }
logy = true
ylim = [0.95, 1.0]

[[plot]]
name = "ci"
kind = "line"
x = "link.bottleneck.rate"
y = "goodput_mbps"
series = "scheme"
where = { "link.bottleneck.queue" = "40 packets" }
spread = "ci95"

[[plot]]
name = "plain"
kind = "line"
x = "link.bottleneck.rate"
y = "goodput_mbps"
series = "scheme"
where = { "link.bottleneck.queue" = "40 packets" }

[[plot]]
name = "bare"
kind = "bar"
x = "scheme"
y = "goodput_mbps"
where = { "link.bottleneck.queue" = "40 packets", "link.bottleneck.rate" = "20 Mbit/s" }
spread = "none"

[[plot]]
name = "zeros"
kind = "bar"
x = "scheme"
y = "drops.link_down"
where = { "link.bottleneck.queue" = "40 packets" }
logy = true

[[plot]]
name = "tput"
kind = "throughput-delay"
series = "scheme"
where = { "link.bottleneck.rate" = "20 Mbit/s", "link.bottleneck.queue" = "40 packets" }

[[plot]]
name = "queueing"
kind = "throughput-delay"
delay = "queueing"
series = "scheme"
spread = "ci95"
where = { "link.bottleneck.rate" = "20 Mbit/s", "link.bottleneck.queue" = "40 packets" }
"""

SHORT = {
    "run.duration": "800 ms",
    "flow.v2x.messages.priority.start": "0 s",
    "flow.v2x.messages.priority.duration": "700 ms",
    "flow.v2x.messages.background.start": "0 s",
    "flow.v2x.messages.background.duration": "700 ms",
}

MSG_SWEEP = f'''
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

[[plot]]
name = "owd"
kind = "throughput-delay"
delay = "owd"
series = "scheduler"
'''


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_sweeps(tmp_path_factory.mktemp("plots"), TCP_SWEEP, MSG_SWEEP)


@pytest.fixture(scope="module")
def drawn(store: Path) -> dict[str, Figure]:
    """The report's figures by file stem, as handed to matplotlib to be saved."""
    return drawn_figures(store)


def tcp_rows(store: Path) -> pd.DataFrame:
    frame = load(store, "tcp")
    assert (frame["status"] == "ok").all()
    return frame


def number(label: str) -> float:
    return float(label.split()[0])


def lines(ax) -> dict[str, ErrorbarContainer]:
    return {c.get_label(): c for c in ax.containers if isinstance(c, ErrorbarContainer)}


# --- Student's t -------------------------------------------------------------------------

@pytest.mark.parametrize("df, quantile", [
    (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (9, 2.262), (10, 2.228),
    (20, 2.086), (30, 2.042), (60, 2.000), (120, 1.980), (10_000, 1.960),
])
def test_t_quantile_matches_the_tables(df: int, quantile: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=5e-4)
    assert t_quantile(0.025, df) == pytest.approx(-quantile, abs=5e-4)
    assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-12)


def test_ci_half_width_is_the_hand_computed_t_interval() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])  # n = 5, s = sqrt(2.5)
    # t(0.975, 4) = 2.776445; 2.776445 · 1.581139 / 2.236068 = 1.963243
    assert ci_half_width(float(values.std(ddof=1)), 5) == pytest.approx(1.963243, abs=1e-6)
    assert ci_half_width(2.0, 2) == pytest.approx(12.706205 * 2.0 / math.sqrt(2), rel=1e-6)
    assert math.isnan(ci_half_width(1.0, 1))
    assert math.isnan(ci_half_width(math.nan, 4))


# --- heatmap -----------------------------------------------------------------------------

def test_heatmap_cells_are_the_means_over_repetitions_from_the_store(
        drawn: dict[str, Figure], store: Path) -> None:
    frame = tcp_rows(store)
    for scheme in SCHEMES:
        fig = drawn[f"tcp-heat-{scheme}"]
        ax = fig.axes[0]
        assert f"scheme = {scheme}" in ax.get_title()
        cells = np.asarray(ax.images[0].get_array())
        assert cells.shape == (len(QUEUES), len(RATES))  # rows: y (queue), columns: x (rate)
        own = frame[frame["scheme"] == scheme]
        places = decimals(cells)
        texts = [t.get_text() for t in ax.texts]
        for i, queue in enumerate(QUEUES):
            for j, rate in enumerate(RATES):
                values = own[(own["link.bottleneck.queue"] == number(queue))
                             & (own["link.bottleneck.rate"] == number(rate))]["goodput_mbps"]
                assert len(values) == REPS
                assert cells[i, j] == pytest.approx(values.mean(), rel=1e-12)
                assert texts[i * len(RATES) + j] == cell_text(values.mean(), places)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["10", "20"]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["10", "40"]
        assert ax.get_xlabel() == "link.bottleneck.rate (Mbit/s)"
        assert ax.get_ylabel() == "link.bottleneck.queue (packets)"
        colorbar = fig.axes[1]
        assert colorbar.get_ylabel() == "goodput (Mbit/s)"


def test_heatmap_numbers_tell_close_values_apart() -> None:
    assert decimals(np.array([0.981, 1.0])) == 3
    assert [cell_text(v, 3) for v in (0.981, 1.0)] == ["0.981", "1.000"]
    assert decimals(np.array([4.8, 24.4])) == 1
    assert cell_text(math.nan, 1) == "–"


# --- y ranges ----------------------------------------------------------------------------

def test_log_plot_has_a_log_y_axis_with_plain_numbers(drawn: dict[str, Figure]) -> None:
    ax = drawn["tcp-log"].axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels() + ax.get_yticklabels(minor=True)]
    assert labels and not any("10^" in label or "times" in label for label in labels)
    narrow = drawn["tcp-narrow"].axes[0]
    assert narrow.get_yscale() == "log"
    assert narrow.get_ylim() == pytest.approx((0.95, 1.0))
    ticks = [float(t) for t in narrow.get_yticks() if 0.95 <= t <= 1.0]
    assert len(ticks) >= 3  # ticked at round values inside the narrow range


def test_throughput_axes_start_at_zero_by_default(drawn: dict[str, Figure]) -> None:
    assert is_rate("goodput_mbps") and is_rate("throughput_mbps")
    assert not is_rate("completion_s") and not is_rate("jain_fairness")
    for stem in ("tcp-plain", "tcp-ci", "tcp-bare", "tcp-tput", "tcp-queueing"):
        low, high = drawn[stem].axes[0].get_ylim()
        assert low == 0.0 and high > 0, stem
    assert drawn["tcp-log"].axes[0].get_ylim()[0] > 0


def test_log_axis_with_values_at_zero_is_a_note_naming_the_plot(
        drawn: dict[str, Figure], store: Path) -> None:
    page = html.unescape((store / "report" / "index.html").read_text(encoding="utf-8"))
    note = ("No figure: plot 'zeros': logy = true, but 2 of the 2 values drawn are not above "
            "zero (smallest 0); a log axis shows only positive values")
    assert page.count(note) == len(RATES)  # one panel per rate, none drawn
    assert not any(stem.startswith("tcp-zeros") for stem in drawn)


# --- spreads -----------------------------------------------------------------------------

def test_ci95_error_bars_are_the_t_interval_and_std_stays_the_default(
        drawn: dict[str, Figure], store: Path) -> None:
    frame = tcp_rows(store)
    frame = frame[frame["link.bottleneck.queue"] == 40.0]
    for stem, half in (("tcp-ci", lambda v: 4.302653 * v.std(ddof=1) / math.sqrt(len(v))),
                       ("tcp-plain", lambda v: v.std(ddof=1))):
        ax = drawn[stem].axes[0]
        found = lines(ax)
        assert list(found) == SCHEMES
        for scheme, container in found.items():
            values = [frame[(frame["scheme"] == scheme)
                            & (frame["link.bottleneck.rate"] == number(rate))]["goodput_mbps"]
                      for rate in RATES]
            assert all(len(v) == REPS and v.std(ddof=1) > 0 for v in values)
            segments = container.lines[2][0].get_segments()
            halves = [(s[1][1] - s[0][1]) / 2 for s in segments]
            assert halves == pytest.approx([half(v) for v in values], rel=1e-6)
    assert "95 % confidence interval" in drawn["tcp-ci"].axes[0].get_title().replace("\n", " ")
    assert "confidence" not in drawn["tcp-plain"].axes[0].get_title()
    bare = drawn["tcp-bare"].axes[0]
    assert all(c.errorbar is None or not c.errorbar.lines[2] for c in bare.containers
               if hasattr(c, "errorbar"))


# --- throughput-delay --------------------------------------------------------------------

def rtt_stats(store: Path, run_key: str, queueing: bool) -> tuple[float, float] | None:
    """(mean, 95th percentile) of the flow's smoothed RTT per bin up to its last delivery
    (every bin of a run that delivered nothing); None without an RTT sample (a run whose
    handshake never completed at 0.5 % loss)."""
    series = load_timeseries(store, run_key)
    own = series[(series["kind"] == "flow") & (series["name"] == "bulk")].sort_values("time_s")
    delivered = np.flatnonzero(own["bytes_delivered"].to_numpy() > 0)
    srtt = own["srtt_ms"].to_numpy()[: delivered[-1] + 1 if delivered.size else len(own)]
    srtt = srtt[np.isfinite(srtt) & (srtt > 0)]
    if not srtt.size:
        return None
    if queueing:
        srtt = srtt - srtt.min()
    return float(srtt.mean()), float(np.percentile(srtt, 95))


def marker_positions(ax) -> dict[str, tuple[float, float, float]]:
    """Per scheme: (p95 delay, mean delay, throughput) of its filled and hollow markers."""
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)
                  and len(c.lines[0].get_xdata())]  # the legend's two key entries are empty
    filled = {c.get_label(): c.lines[0] for c in containers
              if c.get_label() and not c.get_label().startswith("_")}
    hollow = [c.lines[0] for c in containers if c.get_label().startswith("_")]
    result = {}
    for (label, line), mean_line in zip(filled.items(), hollow):
        result[label] = (float(line.get_xdata()[0]), float(mean_line.get_xdata()[0]),
                         float(line.get_ydata()[0]))
    return result


@pytest.mark.parametrize("stem, queueing", [("tcp-tput", False), ("tcp-queueing", True)])
def test_throughput_delay_points_are_mean_throughput_against_rtt_statistics(
        drawn: dict[str, Figure], store: Path, stem: str, queueing: bool) -> None:
    frame = tcp_rows(store)
    frame = frame[(frame["link.bottleneck.queue"] == 40.0)
                  & (frame["link.bottleneck.rate"] == 20.0)]
    ax = drawn[stem].axes[0]
    left, right = ax.get_xlim()
    assert left > right  # the delay axis is inverted: less delay towards the right
    points = marker_positions(ax)
    assert list(points) == SCHEMES
    assert ax.get_legend_handles_labels()[1] == [*SCHEMES, "95th percentile", "mean"]
    for scheme in SCHEMES:
        runs = frame[frame["scheme"] == scheme]
        assert len(runs) == REPS
        # Throughput counts every run; delays only the runs that measured an RTT.
        stats = [s for s in (rtt_stats(store, key, queueing) for key in runs["run_key"]) if s]
        assert stats
        p95, mean, throughput = points[scheme]
        assert p95 == pytest.approx(np.mean([s[1] for s in stats]), rel=1e-9)
        assert mean == pytest.approx(np.mean([s[0] for s in stats]), rel=1e-9)
        assert throughput == pytest.approx(runs["goodput_mbps"].mean(), rel=1e-12)
        assert p95 >= mean
    assert "95th percentile" in ax.get_xlabel()


def test_throughput_delay_of_messages_uses_their_one_way_delay(
        drawn: dict[str, Figure], store: Path) -> None:
    frame = load(store, "msgs")
    ax = drawn["msgs-owd"].axes[0]
    assert ax.get_xlabel().startswith("one-way delay of messages (ms)")
    points = marker_positions(ax)
    for scheduler in ("SRTTF", "SRE"):
        runs = frame[frame["scheduler"] == scheduler]
        p95s, means = [], []
        for key in runs["run_key"]:
            table = load_messages(store, key)
            got = table[table["received_s"].notna()]
            owd = (got["received_s"] - got["sent_s"]).to_numpy() * 1e3
            assert owd.size > 0
            p95s.append(np.percentile(owd, 95))
            means.append(owd.mean())
        p95, mean, throughput = points[scheduler]
        assert p95 == pytest.approx(np.mean(p95s), rel=1e-9)
        assert mean == pytest.approx(np.mean(means), rel=1e-9)
        assert throughput == pytest.approx(runs["goodput_mbps"].mean(), rel=1e-12)


def test_every_new_plot_is_written_as_png_and_svg(drawn: dict[str, Figure], store: Path) -> None:
    figures = store / "report" / "figures"
    for stem in ("tcp-heat-cubic", "tcp-heat-bbr", "tcp-log", "tcp-tput", "msgs-owd"):
        assert stem in drawn
        assert (figures / f"{stem}.png").stat().st_size > 0
        assert (figures / f"{stem}.svg").stat().st_size > 0


def test_a_throughput_delay_scheme_identical_to_another_is_not_hidden() -> None:
    import matplotlib

    from multiconn.figstyle import RC, new_figure
    from multiconn.sweep.report.tputdelay import SchemePoint, draw_throughput_delay
    from multiconn.sweep.spec import PlotSpec

    nan = float("nan")
    same = dict(throughput=9.5, throughput_spread=nan, delay_mean=40.0,
                delay_mean_spread=nan, delay_p95=55.0, delay_p95_spread=nan, runs=2)
    points = [SchemePoint("cubic", **same), SchemePoint("reno", **same),
              SchemePoint("bbr", **{**same, "delay_mean": 30.0}), SchemePoint("vegas", **same)]
    plot = PlotSpec(name="td", kind="throughput-delay", y="goodput_mbps")
    with matplotlib.rc_context(RC):
        fig, (ax,) = new_figure(1)
        draw_throughput_delay(ax, points, plot)
    labels = ax.get_legend_handles_labels()[1]
    assert labels[:4] == ["cubic", "reno (identical to cubic)", "bbr",
                          "vegas (identical to cubic)"]
    markers = [c.lines[0].get_marker() for c in ax.containers
               if c.get_label() and not c.get_label().startswith("_")][:4]
    # The twins are drawn over the first one's circles, each in its own marker.
    assert markers[0] == "o" and markers[2] == "o"
    assert len({markers[0], markers[1], markers[3]}) == 3
