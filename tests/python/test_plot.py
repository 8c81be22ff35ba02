"""`multiconn plot`, the run page of `multiconn report RUN_DIR`, the terminal summary's path
and leg tables, and `make demo`'s script."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.native

CATALOG_SCENARIOS = ROOT / "python" / "multiconn" / "catalog" / "scenarios"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _run(tmp_path: Path, scenario: Path, name: str, **overrides: str) -> Path:
    import multiconn

    result = multiconn.run(scenario, overrides=overrides)
    out = tmp_path / name
    result.write(out)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {
        "bulk": _run(tmp, EXAMPLES / "bulk.toml", "bulk", **{"run.duration": "3 s"}),
        "dc": _run(tmp, CATALOG_SCENARIOS / "dc_throughput.toml", "dc",
                   **{"run.duration": "4 s"}),
        "mp": _run(tmp, EXAMPLES / "mpquic_handover.toml", "mp",
                   **{"run.duration": "16 s"}),
        "v2x": _run(tmp, CATALOG_SCENARIOS / "v2x_two_paths.toml", "v2x",
                    **{"run.duration": "4 s"}),
        "cell": _run(tmp, EXAMPLES / "lte_cell.toml", "cell", **{"run.duration": "3 s"}),
        "nr": _run(tmp, EXAMPLES / "nr_cell.toml", "nr", **{"run.duration": "2 s"}),
        "dc-both": _run(tmp, _write(tmp / "dc_both.toml", DC_BOTH_DIRECTIONS), "dc-both"),
    }


DC_BOTH_DIRECTIONS = """
[run]
duration = "3 s"
[[link]]
name = "lte"
between = ["server", "ue"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "200 packets"
[[link]]
name = "nr"
between = ["server", "ue"]
rate = "30 Mbit/s"
delay = "10 ms"
queue = "200 packets"
[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = { model = "ratio", share = 0.25 }
reverse_policy = { model = "duplicate" }
[[flow]]
name = "down"
from = "server"
to = "ue"
transport = "tcp"
app = "bulk"
route = ["dc"]
"""
"""A download over a split whose return direction (the ACKs) is split too: duplicated."""


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


EXPECTED = {
    "bulk": {"throughput", "queues"},  # one UDP flow: no sender state
    "dc": {"throughput", "transport", "queues", "pdcp-dc"},
    "mp": {"throughput", "transport", "queues", "paths-download"},
    "v2x": {"throughput", "transport", "paths-v2x", "owd-v2x"},
    "cell": {"throughput", "transport", "cell-lte"},
    # The data direction's bearer and the return direction's, each in its own figure.
    "dc-both": {"throughput", "transport", "queues", "pdcp-down", "pdcp-down-reverse"},
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_plot_draws_the_figures_that_apply(runs: dict[str, Path], kind: str, cli) -> None:
    out = runs[kind] / "figs"
    done = cli("plot", runs[kind], "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    stems = {f["stem"] for f in listing}
    if kind in ("v2x", "cell"):
        stems.discard("queues")  # only if a link happened to queue in these seconds
    assert stems == EXPECTED[kind]
    for figure in listing:
        png, svg = (Path(p) for p in figure["files"])
        assert png.read_bytes().startswith(PNG_SIGNATURE) and png.stat().st_size > 10_000
        text = svg.read_text(encoding="utf-8")
        # The title is searchable text in the SVG (its first line, before any wrapping).
        assert figure["title"].split()[0] in text and "time (s)" in text or "one-way" in text


def test_figures_are_byte_identical_across_plots(runs: dict[str, Path], tmp_path: Path) -> None:
    from multiconn.plot import plot_run

    first = plot_run(runs["mp"], tmp_path / "a")
    second = plot_run(runs["mp"], tmp_path / "b")
    for a, b in zip(first, second):
        for fa, fb in zip(a.files, b.files):
            assert fa.read_bytes() == fb.read_bytes(), fa.name


def test_the_cell_figure_draws_each_ues_radio_from_the_cell_rows(runs: dict[str, Path]) -> None:
    import matplotlib

    from multiconn.figstyle import RC
    from multiconn.plot import figures, figures_rc
    from multiconn.result import RunResult

    result = RunResult.read(runs["cell"])
    with matplotlib.rc_context(figures_rc(RC)):
        (drawn,) = figures.cell(result.timeseries, result.summary)
    axes = drawn.figure.axes
    labels = {line.get_label() for line in axes[0].get_lines()}
    assert labels == {"ue1 downlink", "ue1 uplink", "ue2 downlink", "ue2 uplink"}
    # The SINR panel shows the table's values: the downlink mean SINR of ue1 per bin.
    cells = result.timeseries[result.timeseries["kind"] == "cell"]
    own = cells[(cells["ue"] == "ue1") & (cells["direction"] == "downlink")].dropna(
        subset=["sinr_db"])
    line = next(ln for ln in axes[0].get_lines() if ln.get_label() == "ue1 downlink")
    assert list(line.get_ydata()) == pytest.approx(list(own["sinr_db"]))
    # A run without a cell gets no cell figure.
    assert figures.cell(RunResult.read(runs["bulk"]).timeseries, {}) == []


def test_an_nr_cells_figure_says_nr_and_counts_rbs_per_slot(runs: dict[str, Path]) -> None:
    import matplotlib

    from multiconn.figstyle import RC
    from multiconn.plot import figures, figures_rc
    from multiconn.result import RunResult

    nr = RunResult.read(runs["nr"])
    with matplotlib.rc_context(figures_rc(RC)):
        (drawn,) = figures.cell(nr.timeseries, nr.summary)
        (lte,) = figures.cell(RunResult.read(runs["cell"]).timeseries,
                              RunResult.read(runs["cell"]).summary)
    assert drawn.title == "NR cell nr: radio and RLC per UE"
    assert drawn.figure.axes[2].get_ylabel() == "RBs per slot"
    # A 100 MHz DDDSU carrier has 273 PRBs in four slots of five: never more than 218.4.
    rbs = [y for ln in drawn.figure.axes[2].get_lines() for y in ln.get_ydata()]
    assert max(rbs) <= 273 * 0.8 + 1e-9 and max(rbs) > 100
    assert lte.title.startswith("LTE cell") and lte.figure.axes[2].get_ylabel() == "RBs per TTI"


def test_run_result_plots_itself(tmp_path: Path) -> None:
    import multiconn

    result = multiconn.run(EXAMPLES / "bulk.toml", overrides={"run.duration": "1 s"})
    files = result.plot(tmp_path / "figs", formats=("svg",))
    assert sorted(p.name for p in files) == ["queues.svg", "throughput.svg"]
    with pytest.raises(ValueError, match="allowed: png, svg"):
        result.plot(tmp_path / "figs", formats=("pdf",))


def test_a_folder_without_a_run_is_bad_input(tmp_path: Path, cli) -> None:
    done = cli("plot", tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"multiconn: error: {tmp_path}/summary.json: missing (a run "
                                   "folder holds summary.json, timeseries.parquet and "
                                   "scenario.json)")
    (tmp_path / "summary.json").write_text("{}", encoding="utf-8")
    (tmp_path / "timeseries.parquet").write_bytes(b"not parquet")
    done = cli("plot", tmp_path)
    assert done.returncode == 2
    assert "timeseries.parquet: not a readable Parquet file" in done.stderr


def test_report_of_a_run_folder_is_a_page_with_tables_and_figures(runs: dict[str, Path],
                                                                  cli) -> None:
    done = cli("report", runs["mp"], "--json")
    assert done.returncode == 0, done.stderr
    page = Path(json.loads(done.stdout)["report"])
    assert page == runs["mp"] / "report" / "index.html"
    html = page.read_text(encoding="utf-8")
    for title in ("Flows", "Links", "Paths"):
        assert f"<h2>{title}</h2>" in html
    for stem in EXPECTED["mp"]:
        assert f'src="figures/{stem}.png"' in html
        assert (page.parent / "figures" / f"{stem}.png").stat().st_size > 0
    again = cli("report", runs["mp"], "--json")
    assert again.returncode == 0 and page.read_text(encoding="utf-8") == html


def test_terminal_summary_lists_every_path_and_their_bytes_add_up(tmp_path: Path) -> None:
    """A finished 20 MB download: every packet the server sent over the paths either arrived
    or was dropped, so the paths' bytes add up to the flow's."""
    import multiconn
    from multiconn.report import paths_data

    result = multiconn.run(EXAMPLES / "mpquic_handover.toml",
                           overrides={"flow.download.size": "20 MB", "run.duration": "30 s"})
    flow = result.summary["flows"][0]
    assert flow["completion_s"] is not None
    table = paths_data(result.summary)
    assert table is not None
    assert [row[1] for row in table.rows] == ["0 operator_a", "1 operator_b"]
    forward = [p["network"]["forward"] for p in flow["paths"]]
    shown = [float(row[3]) * 1e6 for row in table.rows]
    assert shown == pytest.approx([f["bytes_arrived"] for f in forward], abs=500)
    assert sum(f["bytes_arrived"] + f["bytes_dropped"] for f in forward) == flow["bytes_sent"]
    assert sum(float(row[4]) for row in table.rows) == pytest.approx(100, abs=0.1)


def test_terminal_summary_of_a_split_has_a_line_per_leg(runs: dict[str, Path], cli) -> None:
    done = cli("run", CATALOG_SCENARIOS / "dc_throughput.toml", "--out", runs["dc"] / "again",
               "--set", "run.duration=2s")
    assert done.returncode == 0, done.stderr
    legs = [line.split() for line in done.stdout.splitlines()
            if line.strip().startswith("dc ") and " leg" in line]
    assert [parts[2] for parts in legs] == ["leg1", "leg2"]
    summary = json.loads((runs["dc"] / "again" / "summary.json").read_text())
    split = summary["flows"][0]["pdcp"]["dc"]
    assert [int(parts[3]) for parts in legs] == split["pdus_sent"]
    assert f"multiconn plot {runs['dc'] / 'again'}" in done.stdout.replace("\n", " ")


def test_terminal_summary_marks_the_return_directions_legs(runs: dict[str, Path]) -> None:
    from multiconn.report import legs_data

    summary = json.loads((runs["dc-both"] / "summary.json").read_text())
    table = legs_data(summary)
    assert table is not None
    labels = [row[1] for row in table.rows]
    assert labels == ["dc lte", "dc nr", "dc lte (return)", "dc nr (return)"]
    returned = summary["flows"][0]["pdcp_reverse"]["dc"]
    # Duplicated ACKs: the same PDUs sent on both legs.
    assert [int(row[2]) for row in table.rows[2:]] == returned["pdus_sent"]
    assert returned["pdus_sent"][0] == returned["pdus_sent"][1] > 0


def _demo_module():
    spec = importlib.util.spec_from_file_location("demo", ROOT / "examples" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_demo_writes_figures_a_page_and_notes(tmp_path: Path, capsys) -> None:
    demo = _demo_module()
    assert demo.main(["--out", str(tmp_path / "demo")]) == 0
    said = capsys.readouterr().out
    assert "Dual connectivity: phone_dc gets" in said and "Multipath: vehicle_mp" in said
    figures = {p.name for p in (tmp_path / "demo" / "figures").iterdir()}
    for stem in ("throughput", "pdcp-phone_dc", "paths-vehicle_mp"):
        assert {f"{stem}.png", f"{stem}.svg"} <= figures
        assert (tmp_path / "demo" / "figures" / f"{stem}.png").stat().st_size > 10_000
    html = (tmp_path / "demo" / "index.html").read_text(encoding="utf-8")
    assert 'src="figures/paths-vehicle_mp.png"' in html
    # The notes read the numbers from the run: the coverage gap halves the multipath flow.
    summary = json.loads((tmp_path / "demo" / "summary.json").read_text())
    goodput = {f["name"]: f["goodput_mbps"] for f in summary["flows"]}
    assert f"phone_dc gets {goodput['phone_dc']:.1f} Mbit/s" in said


def _drawn(run: Path, **view: object) -> dict:
    """The figures of a run folder as `multiconn plot` draws them (not saved), by stem."""
    import matplotlib

    from multiconn.figstyle import RC
    from multiconn.plot import draw_run, figures_rc, make_view
    from multiconn.result import RunResult

    result = RunResult.read(run)
    with matplotlib.rc_context(figures_rc(RC)):
        return {d.stem: d for d in draw_run(result, make_view(result, **view))}


def test_a_time_span_restricts_every_figure_and_says_so(runs: dict[str, Path]) -> None:
    drawn = _drawn(runs["mp"], from_s=8.0, to_s=12.0)
    for stem in ("throughput", "transport", "paths-download", "queues"):
        axes = drawn[stem].figure.axes
        assert axes[0].get_xlim() == (8.0, 12.0), stem
        assert "shown: 8 s to 12 s" in " ".join(axes[0].get_title().split()), stem
        for ax in axes:
            for line in ax.get_lines():
                times = [float(t) for t in line.get_xdata()]
                if len(set(times)) > 1:  # a path manager's vertical line has one time
                    assert 8.0 <= min(times) and max(times) < 12.0, (stem, line.get_label())
    # The message CCDF keeps the messages sent in the span.
    v2x = _drawn(runs["v2x"], from_s=1.0, to_s=2.0)["owd-v2x"].figure.axes[0]
    assert "messages sent 1 s to 2 s" in " ".join(v2x.get_title().split())


@pytest.mark.parametrize(("options", "words"), [
    (("--from", "2s", "--to", "1s"), ("--from 2 s is not before --to 1 s",)),
    (("--to", "30s"), ("--to 30 s is beyond the run's end (3 s)",)),
    (("--from", "3s"), ("--from 3 s is at or after the run's end (3 s)",)),
    (("--from", "1"), ("argument --from", "expected a duration with a unit")),
    (("--ccdf-xlim", "0ms,1s"), ("--ccdf-xlim", "a log delay axis starts above 0")),
])
def test_a_span_that_does_not_fit_the_run_is_one_line(runs: dict[str, Path], tmp_path: Path,
                                                      cli, options: tuple[str, ...],
                                                      words: tuple[str, ...]) -> None:
    from conftest import assert_one_error_line

    done = cli("plot", runs["bulk"], "--out", tmp_path / "f", *options)
    assert done.returncode == 2
    assert_one_error_line(done.stderr, *words)
    page = cli("report", runs["bulk"], "--out", tmp_path / "p", *options)
    assert page.returncode == 2
    assert_one_error_line(page.stderr, *words)


def test_the_report_page_says_which_span_its_figures_show(runs: dict[str, Path],
                                                          tmp_path: Path, cli) -> None:
    done = cli("report", runs["bulk"], "--out", tmp_path / "p", "--from", "1s", "--to", "2s")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "p" / "index.html").read_text(encoding="utf-8")
    assert "The figures show 1 s to 2 s of the run (0 s to 3 s)" in html


def test_the_deadline_ccdf_has_a_log_delay_axis_with_the_deadline(runs: dict[str, Path]) -> None:
    ax = _drawn(runs["v2x"])["owd-v2x"].figure.axes[0]
    assert ax.get_xscale() == "log"
    low, high = ax.get_xlim()
    deadlines = [line for line in ax.get_lines() if line.get_label() == "deadline 100 ms"]
    assert len(deadlines) == 1 and low < 100.0 < high
    assert any(t.get_text() == "deadline 100 ms" for t in ax.texts)  # written on the axis
    linear = _drawn(runs["v2x"], ccdf_x="linear", ccdf_xlim=(0.0, 0.2))["owd-v2x"]
    assert linear.figure.axes[0].get_xscale() == "linear"
    assert linear.figure.axes[0].get_xlim() == (0.0, 200.0)


BULK_FLOWS = """
[run]
duration = "1 s"
[[link]]
name = "bottleneck"
between = ["r", "client"]
rate = "40 Mbit/s"
delay = "10 ms"
queue = "100 packets"
"""


def _flows_run(tmp_path: Path, count: int) -> Path:
    text = BULK_FLOWS + "".join(
        f'[[flow]]\nname = "f{i}"\nfrom = "r"\nto = "client"\ntransport = "tcp"\n'
        f'app = "bulk"\nstart = "{0.02 * i:.2f} s"\n' for i in range(count))
    return _run(tmp_path, _write(tmp_path / f"flows{count}.toml", text), f"flows{count}")


def _styles(ax) -> list[tuple[str, str]]:
    from matplotlib.colors import to_hex

    return [(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines()]


def test_many_series_get_distinct_colours_and_styles() -> None:
    from multiconn.figstyle import series_style

    pairs = {(s["color"], s["linestyle"]) for s in map(series_style, range(40))}
    assert len(pairs) == 40


def test_twelve_flows_are_told_apart_and_twenty_show_the_top_and_the_rest(
        tmp_path: Path) -> None:
    from multiconn.figstyle import TOP_SERIES

    twelve = _drawn(_flows_run(tmp_path, 12))
    for stem in ("throughput", "transport"):
        flows = twelve[stem].figure.axes[0]
        assert len(flows.get_lines()) == 12
        assert len(set(_styles(flows))) == 12, stem
    twenty = _drawn(_flows_run(tmp_path, 20))
    flows = twenty["throughput"].figure.axes[0]
    labels = [line.get_label() for line in flows.get_lines()]
    assert len(labels) == TOP_SERIES + 1 and labels[-1] == "other 12 flows (mean)"
    assert len(set(_styles(flows))) == TOP_SERIES + 1
    assert "grey: the mean of the series not drawn one by one" in " ".join(
        flows.get_title().split())
    # The transport figure draws the same flows one by one on each of its axes.
    for ax in twenty["transport"].figure.axes:
        assert [line.get_label() for line in ax.get_lines()] == labels


def test_the_queue_figure_draws_busy_rlc_buffers_and_leaves_idle_links_out(
        runs: dict[str, Path]) -> None:
    drawn = _drawn(runs["cell"])
    axes = drawn["queues"].figure.axes
    labels = {line.get_label() for ax in axes for line in ax.get_lines()}
    assert "ue1 downlink RLC" in labels and "ue2 downlink RLC" in labels
    assert not any(label.startswith("link s1") for label in labels)
    assert "left out as idle" in axes[0].get_title()
    assert "6 link directions and 2 RLC buffers" in " ".join(axes[0].get_title().split())
    assert "Left out as idle: link server_quic forward," in drawn["queues"].caption
    assert "link s1 forward" in drawn["queues"].caption
    assert axes[-1].get_ylabel() == "RLC buffer,\nlargest (kB)"
