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


def _ecn_warnings(scenario: Path, **overrides: str) -> list[str]:
    from multiconn.runner import warnings

    return [w for w in warnings(scenario, overrides=overrides) if "marks ECN" in w]


def test_a_marking_aqm_without_an_ecn_capable_flow_warns(examples: Path, cli,
                                                         tmp_path: Path) -> None:
    """FQ-CoDel marks by default, no built-in profile is ECN-capable: it drops instead."""
    aqm = examples / "aqm.toml"
    line = ('link.bottleneck (forward, server -> client): fq_codel marks ECN, but no flow '
            'crossing it is ECN-capable (bulk), so it drops their packets where it would mark '
            'them; set ecn = true on the flow (flow.bulk.ecn = true) to compare with marking, '
            'or aqm = { model = "fq_codel", ecn = false } to say it drops')
    # Only the data direction: the reverse one carries the ACKs, never ECN-capable.
    assert _ecn_warnings(aqm, **{"link.bottleneck.aqm": '"fq_codel"'}) == [line]
    assert len(_ecn_warnings(aqm, **{"link.bottleneck.aqm": '{ model = "codel", ecn = true }'})) == 1
    assert len(_ecn_warnings(aqm, **{"link.bottleneck.aqm": '{ model = "pie", ecn = true }'})) == 1
    # DualPI2 always marks ECN-capable packets and has no ecn switch to suggest.
    dualpi2 = _ecn_warnings(aqm, **{"link.bottleneck.aqm": '"dualpi2"'})
    assert len(dualpi2) == 1 and dualpi2[0].endswith("to compare with marking"), dualpi2
    # ECN on, or a discipline that does not mark: nothing to say.
    for quiet in ({"link.bottleneck.aqm": '"fq_codel"', "flow.bulk.ecn": "true"},
                  {"link.bottleneck.aqm": '"codel"'}, {"link.bottleneck.aqm": '"pie"'},
                  {"link.bottleneck.aqm": '{ model = "fq_codel", ecn = false }'}, {}):
        assert _ecn_warnings(aqm, **quiet) == [], quiet
    # validate says it, run says it on the terminal and records it in the summary.
    done = cli("validate", str(aqm), "--set", 'link.bottleneck.aqm="fq_codel"')
    assert done.returncode == 0 and f"multiconn: warning: {line}\n" in done.stderr, done.stderr
    done = cli("run", str(aqm), "--out", str(tmp_path / "r"), "-q",
               "--set", 'link.bottleneck.aqm="fq_codel"', "--set", "run.duration=2s")
    assert done.returncode == 0 and done.stderr.count(line) == 1, done.stderr
    result = multiconn.run(aqm, overrides={"link.bottleneck.aqm": '"fq_codel"',
                                           "run.duration": "2 s"})
    assert line in result.summary["warnings"]


def test_a_marking_aqm_on_a_dc_leg_names_the_leg(examples: Path) -> None:
    split = examples / "split_queues.toml"
    lines = _ecn_warnings(split, **{"link.nr.aqm": '"fq_codel"'})
    assert len(lines) == 1 and lines[0].startswith("link.nr (forward, server -> client): "
                                                   "fq_codel marks ECN"), lines
    # Behind a split each drop is also a gap waited out for t_reordering: the line says so
    # (the bottleneck of aqm.toml, no split's leg, does not).
    assert ("on a split's leg each such drop is also a gap the receiving PDCP entity waits out "
            "for t_reordering") in lines[0]
    assert _ecn_warnings(split, **{"link.nr.aqm": '"fq_codel"', "flow.f.ecn": "true"}) == []
