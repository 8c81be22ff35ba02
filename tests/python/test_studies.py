"""`multiconn studies`: the findings lists, the tolerance rule and the verdicts computed from
runs (multiconn.findings, docs/studies.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from multiconn.errors import FindingsError
from multiconn.findings import rule
from multiconn.findings.evaluate import evaluate, judge
from multiconn.findings.listing import read_studies, read_study
from multiconn.findings.sources import check, quick_spec
from multiconn.findings.command import run
from multiconn.sweep.catalog import find

ROOT = Path(__file__).resolve().parents[2]
HEAD = """[study]
id = "t"
title = "a test study"
paper = "nobody, 2026"
seed = "none.txt"
doc = "docs/studies.md"
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "multiconn", *args], capture_output=True,
                          text=True, cwd=ROOT)


def write(tmp_path: Path, body: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + body)
    return path


# -- the rule ------------------------------------------------------------------------------

def test_a_value_within_ten_percent_reproduces_within_twenty_partially_beyond_does_not() -> None:
    assert rule.value(10.9, 10.0).verdict == rule.REPRODUCES
    assert rule.value(9.05, 10.0).verdict == rule.REPRODUCES
    assert rule.value(11.5, 10.0).verdict == rule.PARTIALLY
    assert rule.value(7.9, 10.0).verdict == rule.DOES_NOT


def test_the_papers_own_spread_widens_the_tolerance_when_larger_than_ten_percent() -> None:
    assert rule.value(13.0, 10.0).verdict == rule.DOES_NOT
    assert rule.value(13.0, 10.0, spread=3.0).verdict == rule.REPRODUCES
    assert rule.value(10.5, 10.0, spread=0.1).verdict == rule.REPRODUCES   # 10 % is larger


def test_an_ordering_reproduces_at_every_point_partially_at_some_and_not_at_none() -> None:
    assert rule.order([("a", 2, 1), ("b", 3, 1)], ">").verdict == rule.REPRODUCES
    assert rule.order([("a", 2, 1), ("b", 1, 3)], ">").verdict == rule.PARTIALLY
    assert rule.order([("a", 1, 2), ("b", 1, 3)], ">").verdict == rule.DOES_NOT
    assert rule.order([("a", 1.0, 1.09)], "=").verdict == rule.REPRODUCES
    assert rule.order([("a", 1.0, 1.2)], "=").verdict == rule.DOES_NOT


def test_a_trend_reproduces_step_by_step_and_partially_from_first_to_last() -> None:
    assert rule.trend([("1", 1), ("2", 2), ("4", 3)], "rising").verdict == rule.REPRODUCES
    assert rule.trend([("1", 1), ("2", 3), ("4", 2)], "rising").verdict == rule.PARTIALLY
    assert rule.trend([("1", 3), ("2", 2), ("4", 1)], "rising").verdict == rule.DOES_NOT
    assert rule.trend([("1", 3), ("2", 2), ("4", 1)], "falling").verdict == rule.REPRODUCES
    assert rule.trend([("1", 10), ("2", 10.9), ("4", 10.2)], "flat").verdict == rule.REPRODUCES
    assert rule.trend([("1", 10), ("2", 12), ("4", 10.5)], "flat").verdict == rule.PARTIALLY


def test_a_bound_misses_partially_by_at_most_ten_percent_of_the_value() -> None:
    assert rule.bound([("a", 0.995), ("b", 0.991)], ">=", 0.99).verdict == rule.REPRODUCES
    assert rule.bound([("a", 0.95)], ">=", 0.99).verdict == rule.PARTIALLY
    assert rule.bound([("a", 0.80)], ">=", 0.99).verdict == rule.DOES_NOT
    assert rule.bound([("a", 105.0)], "<=", 100).verdict == rule.PARTIALLY


# -- the lists -----------------------------------------------------------------------------

def test_the_shipped_lists_read_and_name_only_what_the_catalogue_has() -> None:
    studies = read_studies()
    check(studies)
    ids = [f.id for s in studies for f in s.findings]
    assert len(ids) == len(set(ids))
    assert {s.id for s in studies} >= {"mo"}


@pytest.mark.parametrize("body, words", [
    ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\nexperiment = "mathis"\n'
     'metric = "goodput_mbps"\ncheck = "guess"\n', ["finding t-1", "'check' must be one of"]),
    ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\nexperiment = "mathis"\n'
     'metric = "goodput_mbps"\ncheck = "value"\n', ["finding t-1", "'value' is missing"]),
    ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\nexperiment = "mathis"\n'
     'metric = "goodput_mbps"\ncheck = "value"\nvalue = 1\ndirection = "rising"\n',
     ["finding t-1", "unknown field 'direction'"]),
    ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\nexperiment = "mathis"\n'
     'metric = "goodput_mbps"\ncheck = "trend"\ndirection = "up"\nover = { protocol = ["TCP", "QUIC"] }\n',
     ["finding t-1.direction", "rising, falling, flat"]),
    ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\nexperiment = "mathis"\n'
     'metric = "goodput_mbps"\ncheck = "trend"\ndirection = "rising"\nover = { protocol = ["TCP"] }\n',
     ["finding t-1.over.protocol", "at least 2"]),
])
def test_a_bad_finding_is_refused_naming_the_file_the_finding_and_the_field(
        tmp_path: Path, body: str, words: list[str]) -> None:
    path = write(tmp_path, body)
    with pytest.raises(FindingsError) as err:
        read_study(path)
    for word in [str(path), *words]:
        assert word in str(err.value)


def test_a_finding_naming_a_missing_experiment_label_or_metric_is_refused(tmp_path: Path) -> None:
    base = ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\n'
            'check = "value"\nvalue = 1\n')
    for extra, words in [
        ('experiment = "nope"\nmetric = "goodput_mbps"\n', ["nope"]),
        ('experiment = "mathis"\nmetric = "owd"\n', ["metric 'owd'", "goodput_mbps"]),
        ('experiment = "mathis"\nmetric = "goodput_mbps"\nat = { protocol = "SCTP" }\n',
         ["protocol = 'SCTP'", "QUIC, TCP"]),
        ('experiment = "mathis"\nmetric = "goodput_mbps"\nat = { colour = "red" }\n',
         ["column 'colour'"]),
    ]:
        study = read_study(write(tmp_path, base + extra))
        with pytest.raises(FindingsError) as err:
            check([study])
        assert "t finding t-1" in str(err.value)
        for word in words:
            assert word in str(err.value)


def test_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    one = ('[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\npaper = "p"\n'
           'experiment = "mathis"\nmetric = "goodput_mbps"\ncheck = "value"\nvalue = 1\n')
    with pytest.raises(FindingsError, match="used twice"):
        read_study(write(tmp_path, one + one))


# -- verdicts from rows --------------------------------------------------------------------

FRAME = pd.DataFrame({
    "case": ["sp", "sp", "1", "1", "2", "2"],
    "stack": ["bbr", "mptcp", "bbr", "mptcp", "bbr", "mptcp"],
    "goodput_mbps": [10.0, 12.0, 6.0, 8.0, 14.0, 7.0],
    "mp_capacity_mbps": [12.0, 12.0, 12.0, 12.0, 20.0, 20.0],
    "run_key": ["a", "b", "c", "d", "e", "f"],
})


def one(tmp_path: Path, body: str):
    study = read_study(write(tmp_path, '[[finding]]\nid = "t-1"\nwhere = "§1"\nclaim = "c"\n'
                                       'paper = "p"\nexperiment = "drive-residential"\n' + body))
    return study, study.findings[0]


def test_over_walks_only_the_selections_that_do_not_name_its_column(tmp_path: Path) -> None:
    _, f = one(tmp_path, 'metric = "goodput_mbps"\ncheck = "order"\nat = { stack = "mptcp" }\n'
                         'high = { case = "sp" }\nlow = {}\nover = { case = ["1", "2"] }\n')
    j = judge(f, FRAME)
    assert j.verdict == rule.REPRODUCES                    # 12 > 8 and 12 > 7
    assert j.ours == "1: 12 > 8; 2: 12 > 7"


def test_a_share_is_the_mean_goodput_over_the_mean_capacity(tmp_path: Path) -> None:
    _, f = one(tmp_path, 'metric = "mp_share_pct"\ncheck = "value"\nvalue = 50\n'
                         'at = { stack = "bbr" }\n')
    # (10 + 6 + 14) / 3 over (12 + 12 + 20) / 3 = 30 / 44 = 68.2 %, not the mean of the ratios.
    frame = FRAME.assign(mp_share_pct=100 * FRAME["goodput_mbps"] / FRAME["mp_capacity_mbps"])
    assert judge(f, frame).ours == "68.2"


def test_a_ratio_and_a_missing_point(tmp_path: Path) -> None:
    study, f = one(tmp_path, 'metric = "goodput_mbps"\ncheck = "ratio"\nvalue = 0.6\n'
                             'at = { stack = "bbr" }\nhigh = { case = "1" }\nlow = { case = "sp" }\n')
    rows = evaluate([study], {"drive-residential": FRAME})
    assert (rows[0].ours, rows[0].verdict) == ("0.6", rule.REPRODUCES)
    _, f = one(tmp_path, 'metric = "goodput_mbps"\ncheck = "value"\nvalue = 1\nat = { case = "4" }\n')
    with pytest.raises(FindingsError, match="t finding t-1: no run matches case = 4"):
        judge(f, FRAME)


def test_a_run_level_metric_counts_each_run_once() -> None:
    from multiconn.findings.evaluate import mean

    frame = pd.DataFrame({"run_key": ["a", "a", "a", "b"], "flow": ["x", "y", "z", "x"],
                          "jain_fairness": [0.5, 0.5, 0.5, 1.0]})
    assert mean(frame, (), "jain_fairness", "w") == 0.75


def test_quick_keeps_the_points_the_findings_read_and_the_entrys_quick_settings() -> None:
    spec = find("mathis").spec
    quick = quick_spec(spec, {"link.path.forward.loss": {"0.1 %", "2 %"}})
    assert [v.label for v in quick.axis("link.path.forward.loss").values] == ["0.1 %", "2 %"]
    assert [v.label for v in quick.axis("protocol").values] == ["TCP", "QUIC"]
    assert quick.repetitions == 2 and ("run.duration", "20 s") in quick.overrides


@pytest.mark.slow
def test_verdicts_come_from_real_runs_and_repeat_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path, """
[[finding]]
id = "t-mathis"
where = "Mathis et al. 1997"
claim = "TCP NewReno at 1 % loss carries (MSS/RTT)·sqrt(3/(2p))"
paper = "3.547 Mbit/s"
experiment = "mathis"
metric = "goodput_mbps"
check = "value"
value = 3.547
at = { protocol = "TCP", "link.path.forward.loss" = "1 %" }

[[finding]]
id = "t-falls"
where = "Mathis et al. 1997"
claim = "goodput falls with the loss rate"
paper = "1/sqrt(p)"
experiment = "mathis"
metric = "goodput_mbps"
check = "trend"
direction = "falling"
at = { protocol = "QUIC" }
over = { "link.path.forward.loss" = ["0.5 %", "1 %", "2 %"] }
""")
    study = read_study(path)
    check([study])
    first = run([study], tmp_path / "a", quick=True, jobs=2, quiet=True)
    again = run([study], tmp_path / "b", quick=True, jobs=2, quiet=True)
    assert [r.to_dict() for r in first] == [r.to_dict() for r in again]
    by_id = {r.id: r for r in first}
    assert by_id["t-falls"].verdict == rule.REPRODUCES
    assert by_id["t-mathis"].verdict in rule.VERDICTS
    assert abs(float(by_id["t-mathis"].ours) - 3.547) < 0.5 * 3.547


# -- the command ---------------------------------------------------------------------------

def test_the_command_lists_the_findings_and_refuses_an_unknown_study() -> None:
    listed = cli("studies", "--list", "--only", "mo")
    assert listed.returncode == 0, listed.stderr
    assert "mo-r01" in listed.stdout and "mo-d-mptcp-sp-best" in listed.stdout
    bad = cli("studies", "--only", "nope")
    assert bad.returncode == 2
    assert "--only nope: unknown study" in bad.stderr


@pytest.mark.slow
def test_the_quick_json_table_has_a_verdict_for_every_finding(tmp_path: Path) -> None:
    # The LTE cell study: its quick runs take a few seconds (every study's verdicts are checked
    # against today's in the test below).
    done = cli("studies", "--quick", "--json", "--only", "lte", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    listed = read_studies()
    expected = sum(len(s.findings) for s in listed if s.id == "lte")
    assert expected > 0 and len(data["findings"]) == expected
    assert all(f["verdict"] in rule.VERDICTS for f in data["findings"])
    assert sum(data["counts"]["lte"].values()) == expected and "mo" not in data["counts"]
    assert json.loads((tmp_path / "studies.json").read_text()) == data
    assert "| lte |" in (tmp_path / "studies.md").read_text()


# -- today's verdicts, pinned --------------------------------------------------------------

SNAPSHOT = Path(__file__).parent / "snapshots" / "studies_quick.json"
"""Every finding's verdict and value in `multiconn studies --quick`. A change that moves one
fails here: regenerate with MULTICONN_UPDATE_SNAPSHOTS=1 and say in the commit which verdicts
moved and why (the README's counts and the lists' reasons follow the full run)."""


@pytest.mark.slow
def test_every_quick_verdict_is_todays(tmp_path: Path) -> None:
    done = cli("studies", "--quick", "--json", "--jobs", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    got = {f["id"]: [f["verdict"], f["ours"]] for f in data["findings"]}
    assert len(got) >= 100
    if os.environ.get("MULTICONN_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    moved = {k: (expected.get(k), v) for k, v in got.items() if expected.get(k) != v}
    gone = sorted(set(expected) - set(got))
    assert not moved and not gone, f"verdicts moved: {moved}; findings gone: {gone}"
