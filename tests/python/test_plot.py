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
