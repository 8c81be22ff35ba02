"""Sweep files: parsing, expansion into points, seeds, the quick version, and the errors a
malformed file gives before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from multiconn.sweep.plan import derive_seed, plan, points
from multiconn.sweep.spec import SweepError, parse_sweep_text

ROOT = Path(__file__).resolve().parents[2]
BULK = ROOT / "examples" / "scenarios" / "bulk.toml"


def sweep(body: str, scenario: Path = BULK, **experiment: object) -> str:
    """Sweep text with `[experiment] name = "t"`, the scenario and `experiment` fields."""
    extra = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in experiment.items())
    return f'[experiment]\nname = "t"\nscenario = "{scenario}"\n{extra}' + body


def parse(text: str, path: str = "/tmp/t.toml"):
    return parse_sweep_text(text, path)


def test_params_are_crossed_and_values_keep_their_units():
    spec = parse(sweep('''
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s", "40 Mbit/s"]
"flow.bulk.transport" = ["tcp", "quic"]
'''))
    rate = spec.axis("link.bottleneck.rate")
    assert rate.numeric and rate.unit == "Mbit/s"
    assert [v.value for v in rate.values] == [10.0, 20.0, 40.0]
    assert not spec.axis("flow.bulk.transport").numeric
    pts = points(spec)
    assert len(pts) == 6 == spec.point_count
    assert dict(pts[1].labels) == {"link.bottleneck.rate": "10 Mbit/s",
                                   "flow.bulk.transport": "quic"}
    assert pts[1].overrides == (("link.bottleneck.rate", "10 Mbit/s"),
                                ("flow.bulk.transport", "quic"))
    assert spec.parameter == "link.bottleneck.rate"


def test_zip_advances_axes_together():
    spec = parse(sweep('''
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
"link.bottleneck.delay" = ["5 ms", "50 ms"]
''', combine="zip"))
    pts = points(spec)
    assert [dict(p.labels) for p in pts] == [
        {"link.bottleneck.rate": "10 Mbit/s", "link.bottleneck.delay": "5 ms"},
        {"link.bottleneck.rate": "20 Mbit/s", "link.bottleneck.delay": "50 ms"},
    ]


def test_ranges_include_their_end_and_variants_and_labels_make_axes():
    spec = parse(sweep('''
[params]
"link.bottleneck.loss" = { from = 0, to = 2, step = 0.5, unit = "%" }

[[axis]]
name = "series"
[[axis.variant]]
label = "QUIC"
set = { "flow.bulk.transport" = "quic", "flow.bulk.cc" = "cubic" }
[[axis.variant]]
label = "TCP"
set = { "flow.bulk.transport" = "tcp" }

[[axis]]
name = "ratio"
labels = ["1:1", "3:1"]
zip = { "link.bottleneck.rate" = ["20 Mbit/s", "30 Mbit/s"], "link.bottleneck.delay" = ["10 ms", "20 ms"] }
'''))
    loss = spec.axis("link.bottleneck.loss")
    assert [v.label for v in loss.values] == ["0 %", "0.5 %", "1 %", "1.5 %", "2 %"]
    assert spec.point_count == 5 * 2 * 2
    first = points(spec)[0]
    assert first.overrides == (("link.bottleneck.loss", "0 %"),
                               ("flow.bulk.transport", "quic"), ("flow.bulk.cc", "cubic"),
                               ("link.bottleneck.rate", "20 Mbit/s"),
                               ("link.bottleneck.delay", "10 ms"))
    assert dict(first.labels)["ratio"] == "1:1"


def test_log_range_with_count():
    spec = parse(sweep('[params]\n"link.bottleneck.delay" = { from = 1, to = 100, count = 3, '
                       'scale = "log", unit = "ms" }\n'))
    assert [v.value for v in spec.axis("link.bottleneck.delay").values] == [1.0, 10.0, 100.0]


def test_seeds_are_deterministic_per_point_and_independent_of_the_repetition_count():
    body = '[params]\n"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]\n'
    a = parse(sweep(body, repetitions=2))
    b = parse(sweep(body, repetitions=5))
    pa, pb = points(a), points(b)
    seeds_a = [derive_seed(a, p, r) for p in pa for r in range(2)]
    seeds_b = [derive_seed(b, p, r) for p in pb for r in range(2)]
    assert seeds_a == seeds_b
    assert len(set(seeds_a)) == 4
    assert all(0 <= s < 2**63 for s in seeds_a)
    common = parse(sweep(body, seeds="common"))
    cp = points(common)
    assert derive_seed(common, cp[0], 0) == derive_seed(common, cp[1], 0)
    assert derive_seed(common, cp[0], 0) != derive_seed(common, cp[0], 1)
    renamed = parse(sweep(body).replace('name = "t"', 'name = "u"'))
    assert derive_seed(renamed, points(renamed)[0], 0) != seeds_a[0]


@pytest.mark.native
def test_plan_keys_change_with_the_scenario_the_seed_and_the_version():
    spec = parse(sweep('[params]\n"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]\n',
                       repetitions=2))
    runs = plan(spec, "1.0")
    keys = [r.task.run_key for r in runs]
    assert len(set(keys)) == 4
    assert [r.task.run_key for r in plan(spec, "1.0")] == keys
    assert all(a != b for a, b in zip(keys, [r.task.run_key for r in plan(spec, "1.1")]))


@pytest.mark.native
def test_a_trace_file_content_is_part_of_the_run_key(tmp_path):
    trace = tmp_path / "t.down"
    trace.write_text("1\n2\n3\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(BULK.read_text().replace(
        'rate = "40 Mbit/s"', 'rate = { model = "mahimahi", file = "t.down" }'))
    spec = parse(sweep("", scenario))
    before = plan(spec, "1")[0].task.run_key
    trace.write_text("1\n2\n3\n4\n")
    assert plan(spec, "1")[0].task.run_key != before


def test_quick_version_keeps_chosen_values_and_shortens():
    spec = parse(sweep('''
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s", "40 Mbit/s"]
[quick]
repetitions = 1
set = { "run.duration" = "1 s" }
values = { "link.bottleneck.rate" = ["20 Mbit/s"] }
''', repetitions=10))
    quick = spec.quick_version()
    assert quick.repetitions == 1 and quick.is_quick
    assert [v.label for v in quick.axis("link.bottleneck.rate").values] == ["20 Mbit/s"]
    assert points(quick)[0].overrides == (("run.duration", "1 s"),
                                          ("link.bottleneck.rate", "20 Mbit/s"))
    # The same point keeps its seed in the quick version.
    full_point = points(spec)[1]
    assert derive_seed(quick, points(quick)[0], 0) == derive_seed(spec, full_point, 0)


def test_spec_round_trips_through_its_stored_form():
    spec = parse(sweep('''
[params]
"link.bottleneck.rate" = { from = 10, to = 30, step = 10, unit = "Mbit/s" }
[[plot]]
x = "link.bottleneck.rate"
y = "goodput_mbps"
[[plot.reference]]
source = "paper"
x = [10, 20]
y = [9.5, 19]
'''))
    from multiconn.sweep.spec import SweepSpec
    import json

    assert SweepSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


@pytest.mark.parametrize("body, message", [
    ('[params]\n"link.bottleneck.rate" = []\n', "params.link.bottleneck.rate: empty list"),
    ('[params]\n"link.bottleneck.loss" = { from = 2, to = 1, step = 0.5 }\n',
     "params.link.bottleneck.loss: empty range"),
    ('[params]\n"link.bottleneck.loss" = { from = 0, to = 1, step = 0 }\n',
     "params.link.bottleneck.loss.step: expected a finite number above zero"),
    # NaN and infinite ends raised ValueError or OverflowError; so did overflowing spans.
    ('[params]\n"link.bottleneck.loss" = { from = 0, to = nan, step = 1 }\n',
     "params.link.bottleneck.loss.to: expected a finite number, got a number (nan)"),
    ('[params]\n"link.bottleneck.loss" = { from = -inf, to = 0, count = 3 }\n',
     "params.link.bottleneck.loss.from: expected a finite number"),
    ('[params]\n"link.bottleneck.loss" = { from = 0, to = 1, step = inf }\n',
     "params.link.bottleneck.loss.step: expected a finite number above zero"),
    ('[params]\n"link.bottleneck.loss" = { from = -1e308, to = 1e308, step = 1 }\n',
     "params.link.bottleneck.loss: inf values; at most 100000 per range"),
    ('[params]\n"link.bottleneck.loss" = { from = -1e308, to = 1e308, count = 3 }\n',
     "params.link.bottleneck.loss: the range from -1e+308 to 1e+308 overflows the numbers"),
    ('[params]\n"link.bottleneck.loss" = { from = 0, to = 1 }\n',
     "give exactly one of 'step' and 'count'"),
    ('[params]\nrate = [1, 2]\n', "params.rate: 'rate' is not a scenario parameter path"),
    ('[parms]\n', "parms: unknown field"),
    ('[params]\n"link.bottleneck.rate" = ["1 Mbit/s", "1 Mbit/s"]\n', "appears twice"),
    ('[[axis]]\nname = "x"\nlabels = ["a"]\nzip = { "link.bottleneck.rate" = ["1 Mbit/s", '
     '"2 Mbit/s"] }\n', "zipped axes need the same number of values"),
    ('[[axis]]\nparam = "flow.bulk.transport"\nvalues = ["tcp"]\nname = "flow"\n',
     "may not be named 'flow'"),
    ('[[plot]]\nx = "nope"\ny = "goodput_mbps"\n', "plot[0].x: no axis named 'nope'"),
    ('[params]\n"flow.bulk.transport" = ["tcp", "quic"]\n[[plot]]\nx = "flow.bulk.transport"\n'
     'y = "goodput_mbps"\nlogx = true\n', "plot[0].logx: a log x needs a numeric axis"),
    ('[quick]\nvalues = { "link.bottleneck.rate" = ["1 Mbit/s"] }\n',
     "quick.values.link.bottleneck.rate: no such axis"),
    ('[experiment]\n', "invalid TOML"),
    ('[params]\n"link.bottleneck.rate" = [1, 2]\n[[plot]]\nx = "link.bottleneck.rate"\n'
     'y = "goodput"\n', "plot[0].y: 'goodput' is not a result metric"),
    ('[metrics]\ntimeseries = true\n[[plot]]\nkind = "timeseries"\ny = "goodput_mbps"\n',
     "plot[0].y: 'goodput_mbps' is not a time-series column"),
])
def test_malformed_sweep_files_name_the_field(body, message):
    with pytest.raises(SweepError) as err:
        parse(sweep(body))
    assert str(err.value).startswith("/tmp/t.toml: ")
    assert message in str(err.value)


def test_missing_scenario_file_is_named(tmp_path):
    with pytest.raises(SweepError, match="experiment.scenario: cannot read scenario file"):
        parse(f'[experiment]\nscenario = "nope.toml"\n', str(tmp_path / "s.toml"))


@pytest.mark.native
@pytest.mark.parametrize("override, message", [
    ('"link.bottleneck.bogus" = [1, 2]', "unknown field `bogus`"),
    ('"link.nolink.rate" = ["1 Mbit/s"]', 'there is no link named "nolink"'),
    ('"link.bottleneck.rate" = ["5 furlongs"]', 'invalid rate "5 furlongs"'),
])
def test_points_are_validated_before_any_run(override, message):
    spec = parse(sweep(f"[params]\n{override}\n"))
    with pytest.raises(SweepError) as err:
        plan(spec, "1")
    assert str(err.value).startswith("/tmp/t.toml: point 0 (")
    assert message in str(err.value)


def test_timeseries_plots_choose_flows_links_or_both():
    base = '[metrics]\ntimeseries = true\n[[plot]]\nkind = "timeseries"\ny = "throughput_mbps"\n'
    assert parse(sweep(base)).plots[0].show == "flows"
    assert parse(sweep(base + 'show = "links"\n')).plots[0].show == "links"
    with pytest.raises(SweepError, match=r"plot\[0\]\.show: expected one of flows, links"):
        parse(sweep(base + 'show = "queues"\n'))


STACKS = '''
[[axis]]
name = "stack"
[[axis.variant]]
label = "QUIC 212 kB buffer"
set = { "flow.bulk.transport" = "quic" }
[[axis.variant]]
label = "QUIC 25 MB buffer"
set = { "flow.bulk.transport" = "quic", "flow.bulk.receiver.udp_rcvbuf" = "25 MB" }
[[axis.variant]]
label = "TCP"
set = { "flow.bulk.transport" = "tcp" }
[params]
"link.bottleneck.queue" = ["50 packets", "100 packets", "150 packets"]
[metrics]
timeseries = true
'''
"""Three stacks crossed with three queue sizes, for the plot field tests."""


def plot_of(fields: str):
    """The single [[plot]] of the STACKS sweep with these fields."""
    return parse(sweep(STACKS + "[[plot]]\n" + fields)).plots[0]


def test_bar_plot_annotates_its_groups_with_a_metric():
    plot = plot_of('kind = "bar"\nx = "link.bottleneck.queue"\ny = "goodput_mbps"\n'
                   'series = "flow"\nannotate = "jain_fairness"\nannotate_label = "JFI"\n')
    assert (plot.series, plot.annotate, plot.annotate_label) == ("flow", "jain_fairness", "JFI")
    plain = plot_of('kind = "bar"\nx = "stack"\ny = "goodput_mbps"\nannotate = "completion_s"\n')
    assert (plain.annotate, plain.annotate_label) == ("completion_s", None)


def test_where_keeps_one_label_or_a_list_of_labels():
    plot = plot_of('kind = "line"\nx = "link.bottleneck.queue"\ny = "goodput_mbps"\n'
                   'series = "stack"\nwhere = { stack = ["TCP", "QUIC 25 MB buffer"] }\n')
    assert plot.where == (("stack", ("TCP", "QUIC 25 MB buffer")),)
    single = plot_of('kind = "bar"\nx = "stack"\ny = "goodput_mbps"\n'
                     'where = { "link.bottleneck.queue" = "100 packets" }\n')
    assert single.where == (("link.bottleneck.queue", ("100 packets",)),)


@pytest.mark.parametrize("text, seconds", [
    ("1 s", 1.0), ("500 ms", 0.5), ("2min", 120.0), ("250 us", 250e-6), ("0.1 s", 0.1),
])
def test_timeseries_smooth_is_a_duration(text, seconds):
    plot = plot_of(f'kind = "timeseries"\ny = "throughput_mbps"\nsmooth = "{text}"\n')
    assert plot.smooth == pytest.approx(seconds)
    assert plot_of('kind = "timeseries"\ny = "throughput_mbps"\n').smooth is None


def test_timeseries_span_is_a_time_range():
    plot = plot_of('kind = "timeseries"\ny = "throughput_mbps"\nspan = ["0 s", "1500 ms"]\n')
    assert plot.span == (0.0, 1.5)
    assert plot_of('kind = "timeseries"\ny = "throughput_mbps"\n').span is None
    for bad in ('["5 s", "2 s"]', '["2 s"]', '"2 s"', '["2 s", "later"]'):
        with pytest.raises(SweepError, match=r"plot\[0\]\.span: expected \[start, end\]"):
            plot_of(f'kind = "timeseries"\ny = "throughput_mbps"\nspan = {bad}\n')
    with pytest.raises(SweepError, match="only a timeseries plot takes 'span'"):
        plot_of('kind = "line"\nx = "link.bottleneck.queue"\ny = "goodput_mbps"\nspan = ["1 s", "2 s"]\n')


def test_ratio_labels_make_a_categorical_axis_a_line_plot_can_use():
    spec = parse(sweep('''
[[axis]]
name = "ratio"
labels = ["1:1", "2:1", "3:1"]
zip = { "link.bottleneck.rate" = ["20 Mbit/s", "30 Mbit/s", "40 Mbit/s"] }
[[plot]]
kind = "line"
x = "ratio"
y = "goodput_mbps"
'''))
    ratio = spec.axis("ratio")
    assert not ratio.numeric and ratio.unit is None
    assert [v.value for v in ratio.values] == ["1:1", "2:1", "3:1"]
    assert spec.plots[0].x == "ratio"
    assert spec.axis("link.bottleneck.rate").numeric


def test_new_plot_fields_round_trip_and_old_stored_where_reads():
    from multiconn.sweep.spec import SweepSpec
    import json

    spec = parse(sweep(STACKS + '''
[[plot]]
kind = "bar"
x = "link.bottleneck.queue"
y = "goodput_mbps"
series = "flow"
annotate = "jain_fairness"
annotate_label = "JFI"
where = { stack = ["TCP", "QUIC 212 kB buffer"] }
[[plot]]
kind = "timeseries"
y = "throughput_mbps"
smooth = "1 s"
rep = 1
where = { stack = "TCP" }
'''))
    stored = json.loads(json.dumps(spec.to_dict()))
    assert SweepSpec.from_dict(stored) == spec
    stored["plots"][1]["where"] = [["stack", "TCP"]]  # one label per axis, as stored before
    assert SweepSpec.from_dict(stored).plots[1].where == (("stack", ("TCP",)),)


BAR = 'kind = "bar"\nx = "link.bottleneck.queue"\ny = "goodput_mbps"\nseries = "flow"\n'
SERIES = 'kind = "timeseries"\ny = "throughput_mbps"\n'


@pytest.mark.parametrize("fields, message", [
    (BAR + 'annotate = "jfi"\n', "plot[0].annotate: 'jfi' is not a result metric"),
    (BAR + 'annotate = "throughput_mbps"\n',
     "plot[0].annotate: 'throughput_mbps' is not a result metric"),
    (BAR + 'annotate_label = "JFI"\n', "plot[0].annotate_label: labels the 'annotate' metric"),
    (BAR + 'annotate = "jain_fairness"\nannotate_label = ""\n',
     "plot[0].annotate_label: expected a non-empty string"),
    ('kind = "line"\nx = "link.bottleneck.queue"\ny = "goodput_mbps"\n'
     'annotate = "jain_fairness"\n', "plot[0].annotate: only a bar plot takes 'annotate'"),
    (SERIES + 'smooth = "fast"\n', "plot[0].smooth: expected a duration above zero"),
    (SERIES + 'smooth = "1 furlong"\n', "plot[0].smooth: expected a duration above zero"),
    (SERIES + 'smooth = "0 s"\n', "plot[0].smooth: expected a duration above zero"),
    (SERIES + 'smooth = 1\n', "plot[0].smooth: expected a duration above zero"),
    (BAR + 'smooth = "1 s"\n', "plot[0].smooth: only a timeseries plot takes 'smooth'"),
    (BAR + 'where = { stack = [] }\n', "plot[0].where.stack: empty array"),
    (BAR + 'where = { stack = ["TCP", "QUIC"] }\n',
     "plot[0].where.stack: axis 'stack' has no value 'QUIC'"),
    (BAR + 'where = { stack = ["TCP", "TCP"] }\n',
     "plot[0].where.stack: value 'TCP' appears twice"),
    (BAR + 'where = { cc = ["TCP"] }\n', "plot[0].where.cc: no such axis"),
    ('kind = "bar"\nx = "stack"\ny = "goodput_mbps"\nseries = "stack"\n',
     "plot[0].series: 'stack' is already the plot's x"),
    ('kind = "bar"\nx = "queue"\ny = "goodput_mbps"\n', "plot[0].x: no axis named 'queue'"),
    ('kind = "line"\nx = "flow"\ny = "goodput_mbps"\n', "plot[0].x: no axis named 'flow'"),
    (BAR.replace('"flow"', '"cc"'), "plot[0].series: no axis named 'cc'"),
])
def test_malformed_plot_fields_name_the_field(fields, message):
    with pytest.raises(SweepError) as err:
        plot_of(fields)
    assert str(err.value).startswith("/tmp/t.toml: ")
    assert "\n" not in str(err.value)
    assert message in str(err.value)


CCDF = 'kind = "ccdf"\nseries = "stack"\n'


def test_ccdf_plot_defaults_and_fields():
    plot = plot_of(CCDF)
    assert (plot.kind, plot.x, plot.y, plot.series) == ("ccdf", None, "owd_ms", "stack")
    assert (plot.message_kind, plot.deadline, plot.ideal) == ("priority", None, False)
    plot = plot_of(CCDF + 'message_kind = "background"\ndeadline = "250 ms"\nideal = true\n'
                   'where = { "link.bottleneck.queue" = "50 packets" }\n')
    assert (plot.message_kind, plot.deadline, plot.ideal) == ("background", 0.25, True)
    assert plot.where == (("link.bottleneck.queue", ("50 packets",)),)


def test_ccdf_plot_round_trips_through_the_stored_spec():
    from multiconn.sweep.spec import SweepSpec
    import json

    spec = parse(sweep(STACKS + "[[plot]]\n" + CCDF + 'deadline = "100 ms"\nideal = true\n'))
    assert SweepSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    stored = json.loads(json.dumps(spec.to_dict()))
    for key in ("message_kind", "deadline", "ideal"):  # stores written before ccdf plots
        del stored["plots"][0][key]
    assert SweepSpec.from_dict(stored).plots[0].message_kind == "priority"


@pytest.mark.parametrize("fields, message", [
    (CCDF + 'x = "stack"\n', "plot[0].x: a ccdf plot is drawn over the one-way delay; it "
                             "takes no 'x'"),
    (CCDF + 'y = "goodput_mbps"\n', "plot[0].y: a ccdf plot draws the one-way delay of "
                                    "messages; it takes no 'y'"),
    (CCDF + 'logx = true\n', "plot[0].logx: a ccdf plot takes no 'logx'"),
    (CCDF + 'rep = 1\n', "plot[0].rep: a ccdf plot pools every repetition"),
    (CCDF + '[[plot.reference]]\nsource = "paper"\nx = [1]\ny = [0.5]\n',
     "plot[0].reference: a ccdf plot takes no [[plot.reference]] (ideal = true adds"),
    (CCDF + 'message_kind = "urgent"\n',
     "plot[0].message_kind: expected one of priority, background, got 'urgent'"),
    (CCDF + 'message_kind = 1\n', "plot[0].message_kind: expected one of priority"),
    (CCDF + 'deadline = "soon"\n', "plot[0].deadline: expected a duration above zero"),
    (CCDF + 'deadline = "0 ms"\n', "plot[0].deadline: expected a duration above zero"),
    (CCDF + 'deadline = 100\n', "plot[0].deadline: expected a duration above zero"),
    (CCDF + 'ideal = "yes"\n', "plot[0].ideal: expected true or false"),
    (CCDF + 'smooth = "1 s"\n', "plot[0].smooth: only a timeseries plot takes 'smooth'"),
    (CCDF + 'annotate = "jain_fairness"\n', "plot[0].annotate: only a bar plot takes"),
    ('kind = "ccdf"\nseries = "cc"\n', "plot[0].series: no axis named 'cc'"),
    ('kind = "ccdf"\nwhere = { stack = "UDP" }\n',
     "plot[0].where.stack: axis 'stack' has no value 'UDP'"),
    (BAR + 'message_kind = "priority"\n',
     "plot[0].message_kind: only a ccdf plot takes 'message_kind'"),
    (BAR + 'deadline = "100 ms"\n', "plot[0].deadline: only a ccdf plot takes 'deadline'"),
    (SERIES + 'ideal = true\n', "plot[0].ideal: only a ccdf plot takes 'ideal'"),
    ('kind = "pie"\ny = "goodput_mbps"\n',
     "plot[0].kind: expected one of line, bar, timeseries, ccdf, heatmap, throughput-delay, got 'pie'"),
])
def test_malformed_ccdf_fields_name_the_field(fields, message):
    with pytest.raises(SweepError) as err:
        plot_of(fields)
    assert str(err.value).startswith("/tmp/t.toml: ")
    assert "\n" not in str(err.value)
    assert message in str(err.value)


# --- heatmaps, y ranges, spreads and throughput-delay plots -----------------------------

HEAT = 'kind = "heatmap"\nx = "link.bottleneck.queue"\ny = "stack"\nz = "goodput_mbps"\n'
TPUT = 'kind = "throughput-delay"\nseries = "stack"\n'


def test_heatmap_takes_two_axes_and_a_metric():
    plot = plot_of(HEAT + 'zlim = [0, 100]\nname = "cells"\n')
    assert (plot.kind, plot.x, plot.y, plot.z, plot.zlim) == (
        "heatmap", "link.bottleneck.queue", "stack", "goodput_mbps", (0.0, 100.0))


def test_y_range_spread_and_delay_fields_and_their_defaults():
    plain = plot_of(BAR)
    assert (plain.logy, plain.ylim, plain.spread) == (False, None, "std")
    plot = plot_of(BAR + 'logy = true\nylim = [0.5, 100]\nspread = "ci95"\n')
    assert (plot.logy, plot.ylim, plot.spread) == (True, (0.5, 100.0), "ci95")
    tput = plot_of(TPUT)
    assert (tput.y, tput.delay, tput.x, tput.series) == ("goodput_mbps", "rtt", None, "stack")
    assert plot_of(TPUT + 'delay = "queueing"\nlogx = true\n').delay == "queueing"
    assert plot_of(CCDF + 'ylim = [0.001, 1]\n').ylim == (0.001, 1.0)


def test_new_fields_round_trip_and_old_stores_read_with_defaults():
    from multiconn.sweep.spec import SweepSpec
    import json

    spec = parse(sweep(STACKS + "[[plot]]\n" + HEAT + 'zlim = [1, 2]\n[[plot]]\n' + BAR
                       + 'ylim = [0.9, 1.0]\nspread = "none"\n[[plot]]\n' + TPUT))
    stored = json.loads(json.dumps(spec.to_dict()))
    assert SweepSpec.from_dict(stored) == spec
    for plot in stored["plots"]:  # stores written before these fields
        for key in ("z", "logy", "ylim", "zlim", "spread", "delay"):
            del plot[key]
    old = SweepSpec.from_dict(stored).plots[1]
    assert (old.logy, old.ylim, old.spread) == (False, None, "std")


@pytest.mark.parametrize("fields, message", [
    (BAR + 'ylim = [1, 1]\n', "plot[0].ylim: plot 'plot1': the range [1, 1] is empty: lo "
                              "must be below hi"),
    (BAR + 'ylim = [2, 1]\n', "plot[0].ylim: plot 'plot1': the range [2, 1] is empty"),
    (BAR + 'ylim = [0, 1]\nlogy = true\nname = "rel"\n',
     "plot[0].ylim: plot 'rel': a log axis cannot reach 0: lo must be above zero"),
    (BAR + 'ylim = [-1, 1]\nlogy = true\n', "a log axis cannot reach -1"),
    (CCDF + 'ylim = [0, 1]\n', "plot[0].ylim: plot 'plot1': a log axis cannot reach 0"),
    (BAR + 'ylim = [0.9]\n', "plot[0].ylim: plot 'plot1': expected [lo, hi], two finite "
                             "numbers such as [0.95, 1.0], got an array"),
    (BAR + 'ylim = "0.9 to 1"\n', "plot[0].ylim: plot 'plot1': expected [lo, hi]"),
    (BAR + 'ylim = [0, true]\n', "plot[0].ylim: plot 'plot1': expected [lo, hi]"),
    (BAR + 'ylim = [0, inf]\n', "plot[0].ylim: plot 'plot1': expected [lo, hi]"),
    (BAR + 'logy = "yes"\n', "plot[0].logy: expected true or false, got a string ('yes')"),
    (CCDF + 'logy = true\n', "plot[0].logy: only line, bar, timeseries and throughput-delay "
                             "plots take 'logy' (plot 'plot1' is a ccdf plot)"),
    (HEAT + 'logy = true\n', "plot[0].logy: only line, bar, timeseries and throughput-delay"),
    (HEAT + 'ylim = [0, 1]\n', "plot[0].ylim: only line, bar, timeseries, ccdf and "
                               "throughput-delay plots take 'ylim'"),
    (BAR + 'spread = "sem"\n', "plot[0].spread: expected one of std, ci95, none, got 'sem'"),
    (SERIES + 'spread = "ci95"\n', "plot[0].spread: only line, bar and throughput-delay plots "
                                   "take 'spread'"),
    (BAR + 'zlim = [0, 1]\n', "plot[0].zlim: only a heatmap plot takes 'zlim'"),
    (BAR + 'delay = "owd"\n', "plot[0].delay: only a throughput-delay plot takes 'delay'"),
    (HEAT + 'zlim = [3, 2]\n', "plot[0].zlim: plot 'plot1': the range [3, 2] is empty"),
    ('kind = "heatmap"\nx = "stack"\ny = "link.bottleneck.queue"\n',
     "plot[0]: a heatmap plot needs 'z' (the metric its cells show"),
    ('kind = "heatmap"\nx = "stack"\nz = "goodput_mbps"\n',
     "plot[0]: a heatmap plot needs 'y' (an axis name)"),
    ('kind = "heatmap"\nx = "stack"\ny = "goodput_mbps"\nz = "goodput_mbps"\n',
     "plot[0].y: a heatmap's y is an axis: no axis named 'goodput_mbps'"),
    ('kind = "heatmap"\nx = "stack"\ny = "stack"\nz = "goodput_mbps"\n',
     "plot[0].y: x and y are both 'stack': a heatmap needs two axes"),
    ('kind = "heatmap"\nx = "flow"\ny = "stack"\nz = "goodput_mbps"\n',
     "plot[0].x: no axis named 'flow'"),
    (HEAT.replace('"goodput_mbps"', '"speed"'), "plot[0].z: 'speed' is not a result metric"),
    (HEAT + 'series = "flow"\n', "plot[0].series: a heatmap has no series"),
    (HEAT + 'logx = true\n', "plot[0].logx: a heatmap's cells are evenly spaced"),
    (TPUT + 'x = "stack"\n', "plot[0].x: a throughput-delay plot draws the delay on x"),
    (TPUT + 'delay = "p95"\n', "plot[0].delay: expected one of rtt, queueing, owd, got 'p95'"),
    (TPUT + 'rep = 1\n', "plot[0].rep: a throughput-delay plot averages every repetition"),
])
def test_malformed_range_spread_heatmap_and_delay_fields_name_the_field(fields, message):
    with pytest.raises(SweepError) as err:
        plot_of(fields)
    assert str(err.value).startswith("/tmp/t.toml: ")
    assert "\n" not in str(err.value)
    assert message in str(err.value)


def test_heatmap_refuses_zipped_axes_and_several_labels_of_a_third_axis():
    zipped = sweep('''
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
"link.bottleneck.delay" = ["5 ms", "50 ms"]
[[plot]]
kind = "heatmap"
x = "link.bottleneck.rate"
y = "link.bottleneck.delay"
z = "goodput_mbps"
''', combine="zip")
    with pytest.raises(SweepError, match=r"plot\[0\]\.y: 'link.bottleneck.rate' and "
                                         r"'link.bottleneck.delay' are zipped"):
        parse(zipped)
    third = STACKS.replace("[metrics]", '''"link.bottleneck.delay" = ["5 ms", "50 ms"]
[metrics]''') + '''
[[plot]]
name = "mixed"
kind = "heatmap"
x = "link.bottleneck.queue"
y = "stack"
z = "goodput_mbps"
where = { "link.bottleneck.delay" = ["5 ms", "50 ms"] }
'''
    with pytest.raises(SweepError, match=r"plot\[0\]\.where\.link\.bottleneck\.delay: plot "
                                         r"'mixed': a heatmap cell holds one value"):
        parse(sweep(third))


def test_rtt_delay_needs_the_time_series_and_owd_does_not():
    without = STACKS.replace("timeseries = true", "timeseries = false")
    with pytest.raises(SweepError, match=r"plot\[0\]\.delay: plot 'plot1': delay = 'rtt' is "
                                         r"read from the runs' time series: add \[metrics\] "
                                         r"timeseries = true"):
        parse(sweep(without + "[[plot]]\n" + TPUT))
    assert parse(sweep(without + "[[plot]]\n" + TPUT + 'delay = "owd"\n')).plots[0].delay == "owd"


NAMED = '''
[params]
"link.bottleneck.rate" = ["10 Mbit/s", "20 Mbit/s"]
[metrics]
timeseries = true
flow = {flow}
[[plot]]
name = "rtt"
x = "link.bottleneck.rate"
y = "{y}"
[[plot]]
name = "over-time"
kind = "timeseries"
y = "{series}"
'''


def test_time_series_and_summary_names_are_read_as_each_other():
    spec = parse(sweep(NAMED.format(flow='["srtt_ms", "drops_queue", "final_cwnd_bytes"]',
                                    y="srtt_ms", series="final_cwnd_bytes")))
    assert spec.metrics == ("goodput_mbps", "bytes_delivered", "completion_s",
                            "final_srtt_ms", "drops.queue", "final_cwnd_bytes")
    line, over_time = spec.plots
    assert line.y == "final_srtt_ms" and over_time.y == "cwnd_bytes"


@pytest.mark.parametrize("flow, y, series, message", [
    ("[]", "srtt_ms", "srtt_ms",
     "plot[0].y: 'srtt_ms' is not a result metric: the flow summary's 'final_srtt_ms' holds "
     "it for the whole run (the time series' 'srtt_ms' per bin); add [metrics] flow = "
     "['final_srtt_ms']"),
    ("[]", "bytes_in_flight", "srtt_ms", "plot[0].y: 'bytes_in_flight' is not a result metric "
     "but a time-series column: draw it with kind = \"timeseries\""),
    ("[]", "goodput_mpbs", "srtt_ms",
     "plot[0].y: 'goodput_mpbs' is not a result metric (did you mean 'goodput_mbps'?)"),
    ("[]", "goodput_mbps", "srtt", "plot[1].y: 'srtt' is not a time-series column (did you "
     "mean 'srtt_ms'?)"),
])
def test_a_wrong_metric_name_is_told_the_right_one(flow, y, series, message):
    with pytest.raises(SweepError) as err:
        parse(sweep(NAMED.format(flow=flow, y=y, series=series)))
    assert message in str(err.value)
