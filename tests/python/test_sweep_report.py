"""The sweep report (`write_report`): files, figures, statistics, comparisons and failures.

One small real store serves the first tests: two TCP flows over a lossy link, three loss rates
× two queue sizes × two repetitions of one simulated second, one run recorded as failed, plus
a second experiment without [[plot]] entries and with one repetition. A second store, three
flows ("dc", "sc1", "sc2") under three queue sizes × three stacks and three bandwidth ratios,
serves the figure-content tests: they read the matplotlib objects of each saved figure
(bars, error bars, texts, lines) and compare them with values computed from the results table.
"""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from conftest import drawn_figures, record_sweeps
from multiconn.sweep.execute import Outcome, execute
from multiconn.sweep.plan import plan
from multiconn.sweep.report import write_report
from multiconn.sweep.report.aggregate import group_means, trailing_mean
from multiconn.sweep.results import load, load_timeseries
from multiconn.sweep.spec import parse_sweep_text
from multiconn.sweep.store import Store, StoreError

pytestmark = pytest.mark.native

SCENARIO = """
[scenario]
name = "two"
[scenario.run]
duration = "1 s"
bin = "100 ms"
[[scenario.link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "50 packets"
[[scenario.flow]]
name = "cubic"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"
[[scenario.flow]]
name = "reno"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "newreno"
"""

LOSS_SWEEP = """
[experiment]
name = "loss"
title = "Two TCP flows under random loss"
description = "Goodput as loss grows <and> the queue changes."
repetitions = 2
""" + SCENARIO + """
[params]
"link.bottleneck.loss" = ["0.1 %", "1 %", "3 %"]

[[axis]]
name = "queue"
param = "link.bottleneck.queue"
values = ["20 packets", "50 packets"]

[metrics]
timeseries = true

[[plot]]
name = "goodput"
kind = "line"
x = "link.bottleneck.loss"
y = "goodput_mbps"
series = "flow"
where = { queue = "50 packets" }
title = "Goodput against loss"
[[plot.reference]]
source = "Square-root law"
x = [1, 3]
y = [9.5, 5.0]
flow = "cubic"

[[plot]]
name = "bars"
kind = "bar"
x = "flow"
y = "goodput_mbps"
series = "queue"

[[plot]]
name = "cwnd"
kind = "timeseries"
y = "cwnd_bytes"
where = { "link.bottleneck.loss" = "1 %", queue = "50 packets" }
"""

PLAIN_SWEEP = """
[experiment]
name = "plain"
""" + SCENARIO + """
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
"""

FAILED_POINT, FAILED_REP = 1, 1
FAILURE = "RuntimeError: <boom> & co"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    with Store(folder) as db:
        for text in (LOSS_SWEEP, PLAIN_SWEEP):
            spec = parse_sweep_text(text, folder / "sweep.toml")
            runs = plan(spec, "test")
            db.register(spec, runs)
            for run in runs:
                if (spec.name, run.point.index, run.rep) == ("loss", FAILED_POINT, FAILED_REP):
                    outcome = Outcome(run.task.run_key, False, None, FAILURE, 0.0)
                else:
                    outcome = execute(run.task)
                db.record(outcome, run.task.seed, "test", run.scenario_json)
    return folder


@pytest.fixture(scope="module")
def report(store: Path) -> Path:
    return write_report(store)


class Tables(HTMLParser):
    """The page's tables by class: rows of (attributes, text) cells."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[dict[str, str], str]]]] = {}
        self._table: list[list[tuple[dict[str, str], str]]] | None = None
        self._cell: tuple[dict[str, str], list[str]] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "table":
            self._table = self.tables.setdefault(found.get("class", ""), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = (found, [])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table[-1].append((self._cell[0], "".join(self._cell[1]).strip()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[1].append(data)


def tables(report: Path) -> dict[str, list[list[tuple[dict[str, str], str]]]]:
    return Tables(report.read_text(encoding="utf-8")).tables


def test_index_names_each_experiment(report: Path, store: Path) -> None:
    assert report == store / "report" / "index.html"
    html = report.read_text(encoding="utf-8")
    assert "Two TCP flows under random loss" in html
    assert "<code>loss</code>" in html and "<code>plain</code>" in html
    assert "Goodput as loss grows &lt;and&gt; the queue changes." in html
    assert "12 planned, 11 ok" in html


def test_every_plot_panel_has_png_and_svg(report: Path) -> None:
    figures = report.parent / "figures"
    stems = {p.stem for p in figures.iterdir()}
    # bars fixes neither loss nor any where: one figure per loss value
    expected = {"loss-goodput", "loss-bars-0.1", "loss-bars-1", "loss-bars-3", "loss-cwnd",
                "plain-goodput"}
    assert stems == expected
    html = report.read_text(encoding="utf-8")
    for stem in expected:
        assert (figures / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
        assert (figures / f"{stem}.svg").read_bytes().startswith(b"<?xml")
        assert f'src="figures/{stem}.png"' in html and f'href="figures/{stem}.svg"' in html


def test_line_svg_has_series_and_reference_labels_as_text(report: Path) -> None:
    svg = (report.parent / "figures" / "loss-goodput.svg").read_text(encoding="utf-8")
    for label in ("cubic", "reno", "Square-root law · cubic", "link.bottleneck.loss (%)",
                  "goodput (Mbit/s)", "Goodput against loss"):
        assert f">{label}</text>" in svg, label


def test_comparison_table_sets_published_values_beside_ours(report: Path, store: Path) -> None:
    frame = load(store, "loss")
    ok = frame[(frame["status"] == "ok") & (frame["flow"] == "cubic")
               & (frame["queue"] == 50.0)]
    rows = tables(report)["comparison"]
    header = [text for _, text in rows[0]]
    assert header[:4] == ["where", "link.bottleneck.loss", "series", "source"]
    assert len(rows) == 3
    for row, (loss, published) in zip(rows[1:], [(1.0, 9.5), (3.0, 5.0)]):
        values = ok[ok["link.bottleneck.loss"] == loss]["goodput_mbps"]
        mean, std = values.mean(), values.std(ddof=1)
        where, x, series, source, pub, ours, n, diff, pct = row
        assert (where[1], x[1], series[1], source[1]) == \
            ("queue = 50 packets", f"{loss:g} %", "cubic", "Square-root law")
        assert float(pub[0]["data-value"]) == published
        assert float(ours[0]["data-mean"]) == pytest.approx(mean, rel=1e-12)
        assert float(ours[0]["data-std"]) == pytest.approx(std, rel=1e-12)
        assert n[1] == "2"
        assert float(diff[0]["data-value"]) == pytest.approx(mean - published, rel=1e-12)
        assert float(pct[0]["data-value"]) == \
            pytest.approx(100 * (mean - published) / published, rel=1e-12)
        assert pct[1] == f"{100 * (mean - published) / published:+.1f} %"


def test_failed_run_is_listed(report: Path) -> None:
    failures = tables(report)["failures"]
    assert [text for _, text in failures[0]] == \
        ["point", "link.bottleneck.loss", "queue", "rep", "seed", "error"]
    [(point, loss, queue, rep, _, error)] = [[t for _, t in row] for row in failures[1:]]
    assert (point, loss, queue, rep, error) == ("1", "0.1 %", "50 packets", "1", FAILURE)
    assert "RuntimeError: &lt;boom&gt; &amp; co" in report.read_text(encoding="utf-8")


def test_std_is_shown_only_for_two_or_more_values(report: Path) -> None:
    results = tables(report)["results"]
    stat_cells = [cell for row in results[1:] for cell in row if "data-n" in cell[0]]
    single = [cell for cell in stat_cells if cell[0]["data-n"] == "1"]
    several = [cell for cell in stat_cells if cell[0]["data-n"] == "2"]
    # the failed run leaves one value at point 1; plain has one repetition
    assert single and several
    for attrs, text in single:
        assert attrs["data-std"] == "" and "±" not in text
    for attrs, text in several:
        assert not math.isnan(float(attrs["data-std"])) and "±" in text


def test_report_is_byte_identical_when_written_again(report: Path, store: Path,
                                                     tmp_path: Path) -> None:
    again = write_report(store, tmp_path / "again")
    first, second = report.parent, again.parent
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert any(name.suffix == ".svg" for name in names)
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_stale_figures_are_removed(store: Path, tmp_path: Path) -> None:
    stale = tmp_path / "figures" / "gone-plot.svg"
    stale.parent.mkdir()
    stale.write_text("<svg/>")
    write_report(store, tmp_path)
    assert not stale.exists()


def test_folder_without_store_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="holds no results"):
        write_report(tmp_path)


# --- fairness bars, list-valued where, categorical x, smoothed time series -------------------

DC_SCENARIO = """
[scenario]
name = "three"
[scenario.run]
duration = "1 s"
bin = "100 ms"
[[scenario.link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "40 packets"
loss = "0.5 %"
""" + "".join(f"""
[[scenario.flow]]
name = "{name}"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "{cc}"
""" for name, cc in (("dc", "cubic"), ("sc1", "newreno"), ("sc2", "newreno")))

DC_SWEEP = """
[experiment]
name = "dc"
repetitions = 2
""" + DC_SCENARIO + """
[[axis]]
param = "link.bottleneck.queue"
values = ["20 packets", "40 packets", "80 packets"]

[[axis]]
name = "stack"
[[axis.variant]]
label = "A"
set = { "flow.dc.cc" = "cubic" }
[[axis.variant]]
label = "B"
set = { "flow.dc.cc" = "newreno" }
[[axis.variant]]
label = "C"
set = { "flow.dc.cc" = "bbr" }

[metrics]
timeseries = true

[[plot]]
name = "fair"
kind = "bar"
x = "link.bottleneck.queue"
y = "goodput_mbps"
series = "flow"
annotate = "jain_fairness"
annotate_label = "JFI"
where = { stack = "A" }

[[plot]]
name = "fair-default-label"
kind = "bar"
x = "link.bottleneck.queue"
y = "goodput_mbps"
series = "flow"
annotate = "jain_fairness"
where = { stack = "B" }

[[plot]]
name = "stacks"
kind = "line"
x = "link.bottleneck.queue"
y = "goodput_mbps"
series = "stack"
flow = "dc"
where = { stack = ["C", "A"] }

[[plot]]
name = "flows-of-two-stacks"
kind = "bar"
x = "link.bottleneck.queue"
y = "goodput_mbps"
series = "flow"
where = { stack = ["A", "B"] }

[[plot]]
name = "over-time"
kind = "timeseries"
y = "throughput_mbps"
show = "both"
rep = 1
smooth = "300 ms"
where = { "link.bottleneck.queue" = "40 packets", stack = ["A", "B"] }

[[plot]]
name = "over-time-raw"
kind = "timeseries"
y = "throughput_mbps"
show = "links"
rep = 1
where = { "link.bottleneck.queue" = "40 packets", stack = "A" }
"""

RATIO_SWEEP = """
[experiment]
name = "ratio"
repetitions = 2
""" + DC_SCENARIO + """
[[axis]]
name = "ratio"
labels = ["1:2", "1:1", "2:1"]
zip = { "link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s", "40 Mbit/s"] }

[[plot]]
name = "goodput"
kind = "line"
x = "ratio"
y = "goodput_mbps"
series = "flow"
[[plot.reference]]
source = "paper"
x = ["1:1", "2:1"]
y = [6.0, 12.0]
flow = "dc"
"""

DC_QUEUES = ["20 packets", "40 packets", "80 packets"]
DC_FLOWS = ["dc", "sc1", "sc2"]


@pytest.fixture(scope="module")
def dc_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_sweeps(tmp_path_factory.mktemp("dc"), DC_SWEEP, RATIO_SWEEP)


@pytest.fixture(scope="module")
def drawn(dc_store: Path) -> dict[str, Figure]:
    """The report's figures by file stem, as handed to matplotlib to be saved."""
    return drawn_figures(dc_store)


def ok_flows(store: Path, experiment: str) -> pd.DataFrame:
    frame = load(store, experiment)
    return frame[frame["status"] == "ok"]


def queue_rows(frame: pd.DataFrame, queue: str) -> pd.DataFrame:
    return frame[frame["link.bottleneck.queue"] == float(queue.split()[0])]


def bars(ax: Axes) -> dict[str, BarContainer]:
    return {c.get_label(): c for c in ax.containers if isinstance(c, BarContainer)}


def error_extents(container: BarContainer) -> list[tuple[float, float]]:
    """(low, high) of each bar's error bar."""
    segments = container.errorbar.lines[2][0].get_segments()
    return [(float(s[0][1]), float(s[1][1])) for s in segments]


def test_fairness_bars_are_mean_goodput_per_flow_and_parameter(drawn: dict[str, Figure],
                                                               dc_store: Path) -> None:
    ax = drawn["dc-fair"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == DC_QUEUES
    found = bars(ax)
    assert list(found) == DC_FLOWS
    frame = ok_flows(dc_store, "dc")
    frame = frame[frame["stack"] == "A"]
    for flow, container in found.items():
        values = [queue_rows(frame[frame["flow"] == flow], q)["goodput_mbps"] for q in DC_QUEUES]
        assert all(len(v) == 2 for v in values)
        heights = [patch.get_height() for patch in container.patches]
        assert heights == pytest.approx([v.mean() for v in values], rel=1e-12)
        assert all(v.std(ddof=1) > 0 for v in values)
        lows, highs = zip(*error_extents(container))
        assert lows == pytest.approx([v.mean() - v.std(ddof=1) for v in values], rel=1e-12)
        assert highs == pytest.approx([v.mean() + v.std(ddof=1) for v in values], rel=1e-12)


def test_fairness_groups_are_annotated_with_the_mean_jain_index(drawn: dict[str, Figure],
                                                                dc_store: Path) -> None:
    frame = ok_flows(dc_store, "dc")
    for stem, stack, label in (("dc-fair", "A", "JFI"),
                               ("dc-fair-default-label", "B", "jain_fairness")):
        ax = drawn[stem].axes[0]
        runs = frame[frame["stack"] == stack].drop_duplicates(["point", "rep"])
        jfi = [queue_rows(runs, q)["jain_fairness"] for q in DC_QUEUES]
        assert all(len(values) == 2 for values in jfi)
        assert [t.get_text() for t in ax.texts] == [f"{label} {v.mean():.2f}" for v in jfi]
        tops = [max(high for _, high in (error_extents(c)[i] for c in bars(ax).values()))
                for i in range(len(DC_QUEUES))]
        assert [t.xy[0] for t in ax.texts] == [0, 1, 2]
        assert [t.xy[1] for t in ax.texts] == pytest.approx(tops, rel=1e-12)
        assert ax.get_ylim()[1] > max(tops)


def test_group_means_count_a_run_metric_once_per_run() -> None:
    rows = pd.DataFrame({
        "x": ["a", "a", "a", "a", "b", "b"], "point": [0, 0, 0, 1, 2, 2],
        "rep": [0, 0, 1, 0, 0, 0], "flow": ["f", "g", "f", "f", "f", "g"],
        "jain_fairness": [0.5, 0.5, 0.9, 1.0, 0.7, 0.7],
        "goodput_mbps": [1.0, 2.0, 3.0, 4.0, None, 6.0],
    })
    assert group_means(rows, "x", "jain_fairness") == pytest.approx({"a": 0.8, "b": 0.7})
    assert group_means(rows, "x", "goodput_mbps") == pytest.approx({"a": 2.5, "b": 6.0})
    assert group_means(rows, "flow", "jain_fairness") == \
        pytest.approx({"f": (0.5 + 0.9 + 1.0 + 0.7) / 4, "g": 0.6})


def test_list_valued_where_keeps_exactly_the_listed_series(drawn: dict[str, Figure],
                                                           dc_store: Path) -> None:
    ax = drawn["dc-stacks"].axes[0]
    assert "stack ∈ {C, A}" in ax.get_title()
    lines = {c.get_label(): c.lines[0] for c in ax.containers
             if isinstance(c, ErrorbarContainer)}
    assert list(lines) == ["A", "C"]  # the axis's order
    frame = ok_flows(dc_store, "dc")
    for stack, line in lines.items():
        own = frame[(frame["stack"] == stack) & (frame["flow"] == "dc")]
        assert list(line.get_xdata()) == [20.0, 40.0, 80.0]
        assert list(line.get_ydata()) == pytest.approx(
            [queue_rows(own, q)["goodput_mbps"].mean() for q in DC_QUEUES], rel=1e-12)

    two = drawn["dc-flows-of-two-stacks"].axes[0]
    found = bars(two)
    assert set(found) == {f"{flow} · {stack}" for flow in DC_FLOWS for stack in "AB"}
    assert two.get_figure().legends[0].get_title().get_text() == "flow · stack"
    for label, container in found.items():
        flow, stack = label.split(" · ")
        own = frame[(frame["stack"] == stack) & (frame["flow"] == flow)]
        assert [p.get_height() for p in container.patches] == pytest.approx(
            [queue_rows(own, q)["goodput_mbps"].mean() for q in DC_QUEUES], rel=1e-12)


def test_ratio_labels_are_a_categorical_x_in_axis_order(drawn: dict[str, Figure],
                                                        dc_store: Path) -> None:
    ax = drawn["ratio-goodput"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1:2", "1:1", "2:1"]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert ax.get_xlabel() == "ratio"
    lines = {c.get_label(): c.lines[0] for c in ax.containers
             if isinstance(c, ErrorbarContainer)}
    assert list(lines) == DC_FLOWS
    frame = ok_flows(dc_store, "ratio")
    for flow, line in lines.items():
        own = frame[frame["flow"] == flow]
        assert list(line.get_xdata()) == [0.0, 1.0, 2.0]
        assert list(line.get_ydata()) == pytest.approx(
            [own[own["ratio"] == r]["goodput_mbps"].mean() for r in ("1:2", "1:1", "2:1")],
            rel=1e-12)
    [reference] = [line for line in ax.lines if line.get_label() == "paper · dc"]
    assert list(reference.get_xdata()) == [1.0, 2.0]


def naive_trailing_mean(times: list[float], values: list[float], window: float) -> list[float]:
    return [sum(v for s, v in zip(times, values) if t - window + 1e-9 < s <= t)
            / sum(1 for s in times if t - window + 1e-9 < s <= t) for t in times]


def test_trailing_mean_averages_the_window_before_each_sample() -> None:
    times = np.round(np.arange(1, 21) * 0.1, 12)
    values = np.arange(20, dtype="float64") ** 2
    assert trailing_mean(times, values, 0.3) == pytest.approx(
        naive_trailing_mean(list(times), list(values), 0.3))
    assert trailing_mean(times, values, 0.3)[5] == pytest.approx((16 + 25 + 9) / 3)
    assert list(trailing_mean(times, values, 0.05)) == list(values)


def test_timeseries_draws_the_chosen_repetition_smoothed(drawn: dict[str, Figure],
                                                         dc_store: Path) -> None:
    frame = ok_flows(dc_store, "dc")
    runs = queue_rows(frame[frame["rep"] == 1], "40 packets").drop_duplicates("run_key")
    ax = drawn["dc-over-time"].axes[0]
    assert ax.get_ylabel() == "throughput (Mbit/s), 0.3 s mean"
    lines = {line.get_label(): line for line in ax.lines}
    expected = {f"{stack} · {name}" for stack in "AB"
                for name in [*DC_FLOWS, "bottleneck forward", "bottleneck reverse"]}
    assert set(lines) <= expected and len(lines) >= 2 * 4
    for stack in "AB":
        [key] = runs[runs["stack"] == stack]["run_key"]
        series = load_timeseries(dc_store, key)
        for name in [*DC_FLOWS, "bottleneck forward"]:
            kind, _, direction = ("link", *name.split()) if " " in name else ("flow", name, "")
            own = series[(series["kind"] == kind) & (series["name"] == name.split()[0])
                         & (series["direction"] == direction)].sort_values("time_s")
            own = own[own["throughput_mbps"].notna()]
            line = lines[f"{stack} · {name}"]
            assert list(line.get_xdata()) == list(own["time_s"])
            assert list(line.get_ydata()) == pytest.approx(naive_trailing_mean(
                list(own["time_s"]), list(own["throughput_mbps"]), 0.3), rel=1e-9)

    raw = drawn["dc-over-time-raw"].axes[0]
    [key] = runs[runs["stack"] == "A"]["run_key"]
    series = load_timeseries(dc_store, key)
    forward = series[(series["kind"] == "link") & (series["direction"] == "forward")]
    forward = forward[forward["throughput_mbps"].notna()].sort_values("time_s")
    raw_lines = {line.get_label(): line for line in raw.lines}
    assert "bottleneck forward" in raw_lines and not any("·" in k for k in raw_lines)
    assert list(raw_lines["bottleneck forward"].get_ydata()) == \
        list(forward["throughput_mbps"])


OWN_FLOWS_SWEEP = """
[experiment]
name = "own"
[scenario]
name = "own"
[scenario.run]
duration = "0.5 s"
[[scenario.link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "40 packets"
[[scenario.flow]]
name = "mpq"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
cc = "cubic"
start = "0 s"
[[scenario.flow]]
name = "sp"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "cubic"
start = "0 s"

[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]

[[axis]]
name = "scheme"
[[axis.variant]]
label = "MP-QUIC minRTT"
set = { "flow.sp.enabled" = false }
[[axis.variant]]
label = "TCP"
set = { "flow.mpq.enabled" = false }

[metrics]
timeseries = true

[[plot]]
name = "goodput"
x = "link.bottleneck.rate"
y = "goodput_mbps"
series = "scheme"

[[plot]]
name = "over-time"
kind = "timeseries"
y = "throughput_mbps"
where = { "link.bottleneck.rate" = "20 Mbit/s", scheme = ["MP-QUIC minRTT", "TCP"] }
"""
"""Variants that each run a flow of their own: the series are the variants. (Each flow has
enough fields that tomli_w writes the inline scenario's flows as [[flow]] tables, which
--set can reach; an array of short inline tables it writes on one line cannot be.)"""


def test_a_variant_with_one_flow_is_not_labelled_with_its_flow_again(tmp_path: Path) -> None:
    drawn = drawn_figures(record_sweeps(tmp_path, OWN_FLOWS_SWEEP))
    for stem in ("own-goodput", "own-over-time"):
        labels = [text.get_text() for text in drawn[stem].legends[0].get_texts()]
        assert sorted(labels) == ["MP-QUIC minRTT", "TCP"], (stem, labels)
