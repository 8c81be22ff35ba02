"""The sweep report (`write_report`): files, figures, statistics, comparisons and failures.

One small real store serves every test: two TCP flows over a lossy link, three loss rates ×
two queue sizes × two repetitions of one simulated second, one run recorded as failed, plus
a second experiment without [[plot]] entries and with one repetition.
"""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import pytest
from multiconn.sweep.execute import Outcome, execute
from multiconn.sweep.plan import plan
from multiconn.sweep.report import write_report
from multiconn.sweep.results import load
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
