"""Queue disciplines seen from Python and the terminal: the summary's `aqm` block and the
"Queue disciplines" table, present only for links that have one."""

from __future__ import annotations

from pathlib import Path

import multiconn
from multiconn.report import aqm_data, summary_tables


def test_a_codel_link_reports_its_drops_and_the_table_shows_them(examples: Path) -> None:
    result = multiconn.run(examples / "aqm.toml", overrides={"link.bottleneck.aqm": "codel",
                                                          "run.duration": "5 s"})
    forward, reverse = result.summary["links"]
    assert forward["aqm"]["discipline"] == "codel"
    kinds = forward["aqm"]["early_drops"] + forward["aqm"]["tail_drops"] \
        + forward["aqm"]["overflow_drops"]
    assert kinds == forward["drops"]["queue"] > 0
    table = aqm_data(result.summary)
    assert table is not None
    rows = {(r[0], r[1]): r for r in table.rows}
    assert rows[("bottleneck", "forward")][2:] == (
        "codel", str(forward["aqm"]["early_drops"]), "0", "0", "0")
    assert reverse["aqm"]["early_drops"] == 0


def test_drop_tail_runs_have_no_aqm_block_or_table(examples: Path) -> None:
    result = multiconn.run(examples / "aqm.toml", overrides={"run.duration": "2 s"})
    assert all("aqm" not in link for link in result.summary["links"])
    assert aqm_data(result.summary) is None
    assert all(t.title != "Queue disciplines" for t in summary_tables(result.summary))


def test_the_cli_prints_the_queue_discipline_table(cli, examples: Path, tmp_path: Path) -> None:
    proc = cli("run", str(examples / "aqm.toml"), "--out", str(tmp_path / "run"),
               "--set", 'link.bottleneck.aqm="pie"', "--set", "run.duration=3s")
    assert proc.returncode == 0, proc.stderr
    assert "Queue disciplines" in proc.stdout and "pie" in proc.stdout
    plain = cli("run", str(examples / "aqm.toml"), "--out", str(tmp_path / "plain"),
                "--set", "run.duration=3s")
    assert "Queue disciplines" not in plain.stdout
