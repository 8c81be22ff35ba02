"""Bad input to the CLI: exit code 2 and exactly one `multiconn: error:` line naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_one_error_line

ROOT = Path(__file__).resolve().parents[2]

HEADER = '[run]\nduration = "2 s"\n\n'
FLOW = """
[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "udp"
app = "bulk"
"""


def link(body: str) -> str:
    return f'[[link]]\nname = "bottleneck"\nbetween = ["server", "client"]\nqueue = "100 packets"\n{body}\n'


GOOD = HEADER + link('rate = "40 Mbit/s"') + FLOW

# name -> (scenario text, extra files, extra CLI args, words the message must contain)
CASES: dict[str, tuple[str, dict[str, str], list[str], list[str]]] = {
    "missing_required_field": (
        HEADER + '[[link]]\nname = "bottleneck"\nrate = "40 Mbit/s"\nqueue = "100 packets"\n' + FLOW,
        {}, [], ["between"],
    ),
    "wrong_unit": (HEADER + link('rate = "40 Mbit"') + FLOW, {}, [], ["rate", "40 Mbit"]),
    "negative_rate": (HEADER + link('rate = "-40 Mbit/s"') + FLOW, {}, [], ["rate", "negative"]),
    "empty_trace": (
        HEADER + link('rate = { model = "mahimahi", file = "empty.down" }') + FLOW,
        {"empty.down": ""}, [], ["empty.down", "empty"],
    ),
    "malformed_trace": (
        HEADER + link('rate = { model = "mahimahi", file = "bad.down" }') + FLOW,
        {"bad.down": "10\n20\nabc\n40\n"}, [], ["bad.down", "abc"],
    ),
    "unknown_key": (HEADER + link('rate = "40 Mbit/s"\ncolour = "red"') + FLOW, {}, [], ["colour"]),
    # The fixed-delay wire is a test-only hop kind (cargo feature `test-elements`).
    "test_only_wire": (
        GOOD + '[[wire]]\nname = "backhaul"\nbetween = ["a", "b"]\ndelay = "1 ms"\n', {}, [], ["wire"],
    ),
    "override_path_missing": (GOOD, {}, ["--set", "link.nosuch.rate=1Mbit/s"], ["nosuch"]),
    "flow_starts_after_the_end": (
        GOOD, {}, ["--set", "flow.bulk.start=5s"],
        ["flow.bulk.start", "starts at 5 s", "run.duration = 2 s"],
    ),
    "fairness_names_an_unknown_flow": (
        GOOD + '\n[fairness]\nflows = ["nosuch"]\n', {}, [],
        ["fairness.flows", "\"nosuch\"", "(flows: bulk)"],
    ),
    "bdp_queue_without_delay": (
        GOOD, {}, ["--set", "link.bottleneck.queue=1.5 BDP"],
        ["link.bottleneck.queue", "BDP needs a delay"],
    ),
    "override_malformed": (GOOD, {}, ["--set", "link.bottleneck.rate"], ["--set", "KEY=VALUE"]),
}


@pytest.mark.native
@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_scenario_is_one_error_line(case: str, command: str, tmp_path: Path, cli) -> None:
    text, files, args, words = CASES[case]
    (tmp_path / "scenario.toml").write_text(text)
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    out = tmp_path / "out"
    extra = ["--out", out] if command == "run" else []
    proc = cli(command, "scenario.toml", *extra, *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert_one_error_line(proc.stderr, *words)
    assert proc.stdout == ""
    assert not out.exists(), "nothing may be written when the run did not happen"


@pytest.mark.native
def test_good_scenario_of_the_error_cases_is_accepted(tmp_path: Path, cli) -> None:
    # Guards the cases above: they must fail for the reason given, not for a broken base text.
    (tmp_path / "scenario.toml").write_text(GOOD)
    proc = cli("validate", "scenario.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_missing_scenario_file(tmp_path: Path, cli) -> None:
    proc = cli("run", "nosuch.toml", "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, "nosuch.toml")


def test_scenario_path_is_a_directory(tmp_path: Path, cli) -> None:
    proc = cli("validate", tmp_path)
    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, "directory")


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "x.toml"], ["--out"]),
        (["run", "x.toml", "--out", "o", "--seed", "-3"], ["--seed"]),
        (["run", "x.toml", "--out", "o", "--seed", "abc"], ["--seed"]),
        (["frobnicate"], ["frobnicate"]),
        ([], ["COMMAND"]),
    ],
)
def test_usage_errors_are_one_line(args: list[str], words: list[str], cli) -> None:
    proc = cli(*args)
    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, *words)


SWEEP_TEXT = """
[experiment]
name = "t"
scenario = "{scenario}"
repetitions = 1
[set]
"run.duration" = "1 s"
[params]
"link.bottleneck.rate" = {rates}
"""


def _sweep_file(tmp_path: Path, rates: str = '["10 Mbit/s", "20 Mbit/s"]') -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SWEEP_TEXT.format(scenario=ROOT / "examples" / "scenarios" / "bulk.toml",
                                      rates=rates), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_sweep_file_given_to_run_says_so(tmp_path: Path, cli, command: str) -> None:
    sweep = _sweep_file(tmp_path)
    extra = ["--out", str(tmp_path / "out")] if command == "run" else []
    done = cli(command, sweep, *extra)
    assert done.returncode == 2
    assert done.stderr == (f"multiconn: error: {sweep}: this is a sweep file (it has "
                           f"[experiment]): run it with `multiconn sweep {sweep} --out DIR`\n")


def test_a_scenario_given_to_sweep_says_so(tmp_path: Path, cli) -> None:
    scenario = ROOT / "examples" / "scenarios" / "bulk.toml"
    done = cli("sweep", scenario, "--out", tmp_path / "out")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "this is a scenario file (it has [[link]] or [[flow]], no [experiment]): run it " \
           f"with `multiconn run {scenario} --out DIR`" in done.stderr


def test_an_axis_mixing_unit_spellings_is_an_error(tmp_path: Path, cli) -> None:
    sweep = _sweep_file(tmp_path, '["10 Mbit/s", "20Mbit/s", "30 Mbps"]')
    done = cli("sweep", sweep, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr == (f"multiconn: error: {sweep}: params.link.bottleneck.rate[2]: the "
                           "values mix units (Mbit/s, Mbps): write them all in one unit, so "
                           "that the axis is numeric and plots in order\n")


@pytest.mark.native
def test_results_of_an_unknown_experiment_is_an_error(tmp_path: Path, cli) -> None:
    sweep = _sweep_file(tmp_path)
    assert cli("sweep", sweep, "--out", tmp_path / "out", "-q").returncode == 0
    done = cli("results", tmp_path / "out", "--experiment", "nosuch")
    assert done.returncode == 2
    assert done.stderr == (f"multiconn: error: no experiment 'nosuch' in '{tmp_path / 'out'}' "
                           "(experiments: t)\n")


@pytest.mark.native
@pytest.mark.parametrize("override, message", [
    ("link.bottleneck.rate=1e30bit/s", "link.bottleneck.rate: a rate must be at most 320 Gbit/s "
     "(a 40-byte packet then serializes in the clock's 1 ns), got \"1e30bit/s\""),
    ("run.duration=1e30s", "run.duration: a duration must be at most 146 years (2^62 ns, the "
     "clock's range with room for sums), got \"1e30s\""),
    ("flow.bulk.size=1e19B", "flow.bulk.size: a size must be at most 4 EiB (2^62 B), got \"1e19B\""),
    ("link.bottleneck.queue=1e19packets", "link.bottleneck.queue: a queue limit must be at most "
     "2^62 packets, got \"1e19packets\""),
])
def test_quantities_beyond_what_the_models_hold_are_refused(tmp_path: Path, cli, override: str,
                                                             message: str) -> None:
    """Inputs that used to hang a run or wrap around the clock: one line, exit 2, no run."""
    done = cli("run", ROOT / "examples" / "scenarios" / "bulk.toml", "--out", tmp_path / "o",
               "--set", override, "--set", "run.duration=1s" if "duration" not in override
               else "flow.bulk.start=0s")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.rstrip().endswith(message), done.stderr
    assert not (tmp_path / "o").exists()


SPLIT_SIZE = "split.dc.policy.size: a batch size must be a whole number ≥ 1, got"
SPLIT_SHARE = ("split.dc.policy.share: the share of the first leg must lie between 0 and 1 (or "
               "0 % and 100 %), got")


@pytest.mark.parametrize("scenario, override, message", [
    # A field inside a table tagged by `model`, set by --set: the override and the field
    # itself are named (they were the file's line and `split.dc.policy`), in the schema's words.
    ("split_queues", "split.dc.policy.size=-1", f"{SPLIT_SIZE} -1"),
    ("split_queues", "split.dc.policy.size=2.5", f"{SPLIT_SIZE} 2.5"),
    ("split_queues", "split.dc.policy.size=0", f"{SPLIT_SIZE} 0"),
    ("split_queues", "split.dc.policy.size=1e30",
     "split.dc.policy.size: a batch size must be at most 4294967295, got 1e30"),
    ("split_queues", "split.dc.policy.share=1.5", f"{SPLIT_SHARE} 1.5"),
    ("split_queues", "split.dc.policy.share=-0.1", f"{SPLIT_SHARE} -0.1"),
    ("split_queues", "split.dc.policy.share=nan", f"{SPLIT_SHARE} NaN"),
    ("bulk", 'link.bottleneck.loss={ model = "gilbert_elliott", p = 0.1, r = 2 }',
     'link.bottleneck.loss.r: a probability must lie in [0, 1], got 2 (for 2 %, write 0.02 or '
     '"2 %")'),
    # No type of the code in the message.
    ("bulk", "run=5", "run: must be a table of fields, got integer 5"),
    # serde's "expected u64" in the schema's words.
    ("bulk", "run.seed=-1", "run.seed: must be a whole number ≥ 0, got -1"),
    ("bulk", "run.seed=18446744073709551615",
     "run.seed: TOML integers stop at 2^63−1 (9223372036854775807), got 18446744073709551615; a "
     "larger seed is given on the command line, --seed N (0 ≤ N < 2^64)"),
    # Values that were taken silently.
    ("bulk", "link.bottleneck.delay=1e-30 ms",
     "link.bottleneck.delay: a duration must be 0 or at least 1 ns (the clock's resolution; "
     "shorter ones would round to 0), got \"1e-30 ms\""),
    ("bulk", 'link.bottleneck.delay={ model = "normal", mean = "10 ms", cv = 1e30 }',
     "link.bottleneck.delay.cv: the coefficient of variation must be at most 10, got 1e30: beyond "
     "it nearly half the draws are cut to 0 and the rest reach tens of means, so the delay no "
     "longer varies around its mean (for a heavy tail, use an empirical histogram or a delay "
     "series)"),
])
def test_a_bad_value_names_the_override_the_field_and_what_is_allowed(
        tmp_path: Path, cli, scenario: str, override: str, message: str) -> None:
    path = ROOT / "examples" / "scenarios" / f"{scenario}.toml"
    done = cli("run", path, "--out", tmp_path / "o", "-q", "--set", override)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"multiconn: error: {path} (--set {override}): {message}\n"
    assert not (tmp_path / "o").exists()


def test_a_seed_beyond_toml_integers_in_a_file_names_the_field_and_the_way_out(
        tmp_path: Path, cli) -> None:
    text = (ROOT / "examples" / "scenarios" / "bulk.toml").read_text()
    (tmp_path / "s.toml").write_text(text.replace('[run]\n', '[run]\nseed = 18446744073709551615\n'))
    line = text.splitlines().index("[run]") + 2
    done = cli("validate", "s.toml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"multiconn: error: s.toml:{line}: run.seed: TOML integers stop at "
                           "2^63−1 (9223372036854775807); a larger seed is given on the command "
                           "line, --seed N (0 ≤ N < 2^64)\n")


STORM = """
name = "storm"
[run]
duration = "1 s"
[[link]]
name = "l"
between = ["a", "b"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "100 packets"
""" + "".join(f"""
[[flow]]
name = "f{i}"
from = "a"
to = "b"
transport = "udp"
app = "cbr"
rate = "100 kbit/s"
""" for i in range(8))


@pytest.mark.native
def test_the_watchdog_ends_a_run_whose_time_stands_still(tmp_path: Path, cli) -> None:
    """Eight sources waking at 0 s are a storm for a limit of 4 events per instant: the run
    ends with one line naming the instant and the event, its results so far kept apart."""
    import json

    import multiconn
    from multiconn.errors import RunStalled

    scenario = tmp_path / "storm.toml"
    scenario.write_text(STORM, encoding="utf-8")
    done = cli("run", scenario, "--out", tmp_path / "o", "--stall-limit", "4", "-q")
    assert done.returncode == 1
    assert done.stderr == ("multiconn: error: the run stalled: 5 events at 0.000000000 s without "
                           "virtual time advancing (the last was a UDP source wake-up); a model "
                           "keeps scheduling work for the same instant; the results up to then "
                           f"are in {tmp_path / 'o'}/incomplete\n")
    summary = json.loads((tmp_path / "o" / "incomplete" / "summary.json").read_text())
    assert summary["incomplete"].startswith("the run stalled") and summary["sim_time_s"] == 0
    assert not (tmp_path / "o" / "summary.json").exists()
    with pytest.raises(RunStalled) as caught:
        multiconn.run(STORM, stall_limit=4)
    assert caught.value.partial.summary["incomplete"] == summary["incomplete"]
    full = multiconn.run(STORM)  # the default limit leaves a normal burst alone
    assert "incomplete" not in full.summary and full.summary["sim_time_s"] == 1


def test_a_trace_on_both_directions_warns_on_validate_and_run(tmp_path, cli) -> None:
    (tmp_path / "five.down").write_text("".join(f"{t}\n" for t in range(1, 6)))
    text = (Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "bulk.toml").read_text()
    text = text.replace('rate = "40 Mbit/s"',
                                    'rate = { model = "mahimahi", file = "five.down" }')
    (tmp_path / "s.toml").write_text(text)
    for args in (("validate", "s.toml"),
                 ("run", "s.toml", "--out", tmp_path / "out", "--set", "run.duration=0.1s", "-q")):
        proc = cli(*args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if "warning" in line]
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("multiconn: warning: link.bottleneck.rate: the trace \"five.down\" "
                                   "throttles both directions"), lines[0]
    proc = cli("validate", "s.toml", "--set", "link.bottleneck.reverse.rate=100 Mbit/s", cwd=tmp_path)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr


def test_a_burst_above_capacity_is_printed_once_and_recorded(tmp_path, cli) -> None:
    scenario = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "tcp_quic_share.toml"
    # With a 40-packet queue (not the example's 67) the TCP flow delivers one bin above the
    # bottleneck's rate, early in its slow start.
    proc = cli("run", scenario, "--out", tmp_path / "out", "-q", "--set", "link.bottleneck.queue=40 packets")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("multiconn: warning: flow tcp: ") and "a burst, not capacity" in lines[0]
    import json

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["warnings"] == [lines[0].removeprefix("multiconn: warning: ")]
