"""The V2X catalogue entries end to end: `multiconn reproduce v2x-loss --quick` (and
v2x-variable-delay) runs, stores every run's messages, draws the CCDFs, and its stored results
show the findings of Mogensen & Markmøller: with the congestion fix the selective redundant
scheduler (SRE) is as reliable as the fully redundant one (RE) and more reliable than min-RTT
(SRTTF) under loss, while RE spends about half its bytes on copies and SRE very few; and the
mixed test of its future work (§9.5: loss and varying delay at once, with obsolete-data
dropping, C1, and a delay-based controller)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from multiconn import load, load_messages, messages

pytestmark = [pytest.mark.native, pytest.mark.e2e]

RELIABILITY = "messages.priority.reliability"
P999 = "messages.priority.owd_p999_ms"
EFFICIENCY = "bandwidth_efficiency"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("v2x") / "out"
    done = subprocess.run(
        [sys.executable, "-m", "multiconn", "reproduce", "v2x-loss", "v2x-variable-delay",
         "v2x-mixed", "--quick", "--out", str(out), "--jobs", "2", "--quiet"],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return out


def one(frame: pd.DataFrame, metric: str, **labels: object) -> float:
    rows = frame
    for name, value in labels.items():
        rows = rows[rows[name] == value]
    assert len(rows) == 1, labels
    return float(rows[metric].iloc[0])


def test_loss_quick_version_stores_every_run_with_its_messages(results: Path) -> None:
    frame = load(results, "v2x-loss")
    assert (frame["status"] == "ok").all()
    assert len(frame) == 2 * 3 * 2  # loss 0 and 1 %, three schedulers, fix off and on
    for key in frame["run_key"]:
        table = load_messages(results, key)
        priority = table[table["kind"] == "priority"]
        assert len(priority) == 48  # 20 s of one message per 417 ms (the loss test's 23 kbit/s)
    row = frame[(frame["loss"] == 1.0) & (frame["scheduler"] == "SRE")
                & (frame["fix"] == "on")].iloc[0]
    table = load_messages(results, row["run_key"])
    assert messages.reliability(table[table["kind"] == "priority"], 0.1) == pytest.approx(
        row[RELIABILITY])


def test_sre_is_as_reliable_as_re_and_beats_srttf_with_the_fix(results: Path) -> None:
    frame = load(results, "v2x-loss")
    fixed = frame[frame["fix"] == "on"]
    sre = one(fixed, RELIABILITY, loss=1.0, scheduler="SRE")
    srttf = one(fixed, RELIABILITY, loss=1.0, scheduler="SRTTF")
    assert sre >= srttf
    assert sre >= 0.99
    assert one(fixed, RELIABILITY, loss=1.0, scheduler="RE") >= 0.99
    assert one(fixed, P999, loss=1.0, scheduler="SRE") < one(fixed, P999, loss=1.0,
                                                                scheduler="SRTTF")
    for scheduler in ("SRTTF", "RE", "SRE"):
        assert one(fixed, RELIABILITY, loss=0.0, scheduler=scheduler) == 1.0


def test_without_the_fix_priority_data_waits_for_the_window(results: Path) -> None:
    frame = load(results, "v2x-loss")
    for scheduler in ("RE", "SRE"):
        before = one(frame, RELIABILITY, loss=1.0, scheduler=scheduler, fix="off")
        after = one(frame, RELIABILITY, loss=1.0, scheduler=scheduler, fix="on")
        assert before < after


def test_re_spends_half_its_bytes_on_copies_and_sre_few(results: Path) -> None:
    frame = load(results, "v2x-loss")
    for loss in (0.0, 1.0):
        for fix in ("off", "on"):
            re = one(frame, EFFICIENCY, loss=loss, scheduler="RE", fix=fix)
            sre = one(frame, EFFICIENCY, loss=loss, scheduler="SRE", fix=fix)
            srttf = one(frame, EFFICIENCY, loss=loss, scheduler="SRTTF", fix=fix)
            assert 0.40 < re < 0.55 < 0.85 < sre < srttf


def test_variable_delay_redundancy_follows_the_best_path(results: Path) -> None:
    frame = load(results, "v2x-variable-delay")
    assert (frame["status"] == "ok").all()
    assert one(frame, RELIABILITY, scheduler="SRE") == 1.0
    assert one(frame, RELIABILITY, scheduler="SRE") >= one(frame, RELIABILITY,
                                                           scheduler="SRTTF")
    assert one(frame, P999, scheduler="SRE") < one(frame, P999, scheduler="SRTTF")
    assert one(frame, P999, scheduler="SRE") == pytest.approx(one(frame, P999, scheduler="RE"),
                                                              abs=5.0)


def test_the_report_draws_the_ccdfs(results: Path) -> None:
    figures = {p.name for p in (results / "report" / "figures").iterdir()}
    for stem in ("v2x-loss-ccdf-1pct-fix-off", "v2x-loss-ccdf-1pct-fix-on",
                 "v2x-variable-delay-ccdf"):
        assert {f"{stem}.png", f"{stem}.svg"} <= figures
    svg = (results / "report" / "figures" / "v2x-variable-delay-ccdf.svg").read_text()
    for text in ("SRTTF", "SRE", "ideal", "deadline 100 ms", "P(OWD &gt; x)"):
        assert text in svg, text


def test_mixed_quick_version_sre_with_c1_is_as_reliable_and_as_efficient(results: Path) -> None:
    frame = load(results, "v2x-mixed")
    assert (frame["status"] == "ok").all()
    assert len(frame) == 3 * 2 * 2  # schedulers, C1 off and on, OLIA and wVegas
    for coupled in ("OLIA", "wVegas"):
        with_c1 = dict(scheduler="SRE", c1="on", coupled=coupled)
        without = dict(scheduler="SRE", c1="off", coupled=coupled)
        # With OLIA (the study's controller) C1 is at least as reliable. With wVegas one run
        # each may differ by a single message either way: in this quick run the one late
        # message with C1 (115 ms, ideal 29 ms) lost its copy on the fast path while the
        # other path's delay peaked; it was not expired. Over the full entry's 10 runs:
        # 1.0000 without C1 and 0.9998 with it (docs/v2x-experiments.md).
        slack = 0.0 if coupled == "OLIA" else 1 / 200
        assert one(frame, RELIABILITY, **with_c1) >= one(frame, RELIABILITY, **without) - slack
        # C1 costs no bytes (a new stream id per message, a few RESET_STREAM frames) and saves
        # those of late repairs; the efficiency of one run then differs from the other's by
        # the background's run-to-run goodput (the priority copies' share of the bytes), well
        # under 1 %: docs/v2x-experiments.md.
        assert one(frame, EFFICIENCY, **with_c1) >= one(frame, EFFICIENCY, **without) - 0.01
    # C1's expired messages are in the message table and the summary alike; without C1 no
    # message expires and the summary has no count.
    for _, row in frame.iterrows():
        table = load_messages(results, row["run_key"])
        priority = table[table["kind"] == "priority"]
        expired = int(priority["expired_s"].notna().sum())
        if row["c1"] == "on":
            assert expired == row["messages.priority.expired"]
            assert priority["stream"].is_unique
        else:
            assert expired == 0 and pd.isna(row["messages.priority.expired"])
            assert priority["stream"].nunique() == 1


def test_the_mixed_report_draws_its_ccdfs_with_the_ideal(results: Path) -> None:
    figures = results / "report" / "figures"
    for stem in ("v2x-mixed-ccdf-olia", "v2x-mixed-ccdf-olia-c1", "v2x-mixed-ccdf-sre",
                 "v2x-mixed-ccdf-wvegas-c1", "v2x-mixed-background"):
        assert (figures / f"{stem}.svg").is_file(), stem
    svg = (figures / "v2x-mixed-ccdf-sre.svg").read_text()
    for text in ("off", "on", "ideal", "deadline 100 ms"):
        assert text in svg, text


@pytest.fixture(scope="module")
def stack_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick version of v2x-variable-delay-mpquic: both stacks, SRTTF and SRE, fix off and
    on, the synthetic series (20 s) and the spiky one (1000 s)."""
    out = tmp_path_factory.mktemp("v2x-stack") / "out"
    done = subprocess.run(
        [sys.executable, "-m", "multiconn", "reproduce", "v2x-variable-delay-mpquic", "--quick",
         "--out", str(out), "--jobs", "2", "--quiet"],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return out


def test_on_the_studys_stack_delay_spikes_take_sre_off_the_ideal_curve_without_the_fix(
        stack_results: Path) -> None:
    # Fig. 37 against Fig. 44: with spikes above 1 s, mp-quic's RTO collapses a path's window
    # and nothing gives it back; without the fix SRE's priority copies wait for it, with the
    # fix they follow the better path as the ideal does.
    frame = load(stack_results, "v2x-variable-delay-mpquic")
    assert (frame["status"] == "ok").all()
    assert len(frame) == 2 * 2 * 2 * 2  # series, stack, fix, SRTTF and SRE
    sre = {(series, fix): frame[(frame["series"] == series) & (frame["fix"] == fix)
                                & (frame["stack"] == "mpquic-2018")
                                & (frame["scheduler"] == "SRE")].iloc[0]
           for series in ("synthetic", "spiky") for fix in ("off", "on")}
    ideal = {}
    for key, row in sre.items():
        table = load_messages(stack_results, row["run_key"])
        ideal[key] = 1000 * messages.owd_quantile(
            messages.ideal(table[table["kind"] == "priority"]), 0.999)
    # The synthetic series (peaks of 114 ms) fire no timer: the fix changes nothing.
    for fix in ("off", "on"):
        assert sre["synthetic", fix][RELIABILITY] == 1.0
    assert sre["synthetic", "off"][P999] == sre["synthetic", "on"][P999]
    # The spiky series: off the ideal without the fix, on it with the fix.
    off, on = sre["spiky", "off"], sre["spiky", "on"]
    assert ideal["spiky", "off"] < 50.0
    assert off[RELIABILITY] < 0.999 and off[P999] > 100.0
    assert on[RELIABILITY] == 1.0
    assert on[P999] == pytest.approx(ideal["spiky", "on"], abs=2.0)
    # The model's default stack undoes what the spikes made it reduce: SRE stays on the ideal
    # curve without the fix.
    default = frame[(frame["series"] == "spiky") & (frame["stack"] == "rfc9002")
                    & (frame["fix"] == "off") & (frame["scheduler"] == "SRE")].iloc[0]
    assert default[RELIABILITY] == 1.0
    assert default[P999] == pytest.approx(ideal["spiky", "off"], abs=2.0)
    figures = {p.name for p in (stack_results / "report" / "figures").iterdir()}
    for stem in ("ccdf-fix-off", "ccdf-fix-on", "ccdf-rfc9002-fix-off", "reliability"):
        assert f"v2x-variable-delay-mpquic-{stem}.svg" in figures, stem
