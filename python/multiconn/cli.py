"""The `multiconn` command: `run` and `validate` a scenario; `sweep`, `list`, `reproduce`,
`results` and `report` (see multiconn.sweep.commands); `owd-series` (see multiconn.owdgen);
`drive generate` and `drive analyse` (see multiconn.drive). A command's parser is built only
when the command line names it (`COMMANDS`): a command loads its own modules, not the others'.

Exit codes: 0 success; 2 bad input (invalid scenario or sweep, unreadable file, bad option),
reported as one line `multiconn: error: <message>` on stderr; 3 a sweep finished with failed
runs; 1 an internal error (one line, plus the traceback with `--verbose`); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ._native import ScenarioError
from .errors import (BackendError, DriveTableError, EmulationError, EmulationFailed, FindingsError, InvariantViolation,
                     PlotOptionError, RunFolderError, RunStalled, StoreError, SweepError)
from .source import ScenarioFileError, parse_set_option

PROG = "multiconn"
EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE, as a program killed by the signal would exit."""


class BadInput(Exception):
    """Bad input found by the CLI itself (reported with exit code 2)."""


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"


def _error(message: str) -> None:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        _error(f"{message} (see '{self.prog} --help')")
        raise SystemExit(EXIT_BAD_INPUT)


def _set_option(text: str) -> tuple[str, str]:
    try:
        return parse_set_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--set ")) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got '{text}'") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2^64-1, got {value}")
    return value


RUN_DESCRIPTION = """\
Run a scenario to its end and write its results to a folder: summary.json (flows, links,
fairness, seed, wall time; every field in docs/summary.md), timeseries.parquet (one row per
time bin and flow, link direction, path, split leg and split bearer), scenario.json (the
scenario after overrides), messages.parquet when flows send messages (one row per message),
qlog/<flow>_<client|server>.sqlog for QUIC flows with qlog = true, with --pcap
pcap/<flow>_<node>.pcapng (one packet capture per flow end, for Wireshark: docs/pcap.md) and,
with --csv, timeseries.csv (and messages.csv).
The same scenario and seed always give the same files (apart from wall_time_s). A short
summary table is printed afterwards, and runs longer than about a second show a progress bar.
"""
EMULATE_DESCRIPTION = """\
Run a scenario in real time: its links, PDCP splits and cells are the simulator's own models,
driven by the clock, between network namespaces where real stacks run — kernel TCP (iperf3),
kernel MPTCP (mptcpize iperf3), ngtcp2, aioquic, or your own programs ([flow.emulate]).
Needs root. Writes summary.json (what each application and the emulator measured, and how
late packets left versus the model), timeseries.parquet and .csv, scenario.json and, per
flow, flows/<name>/ with the programs' logs, reports and qlogs. Nothing outside the
namespaces it creates is touched; everything is removed on exit, Ctrl-C or kill -9."""

EMULATE_EXAMPLE = """\
example:
  sudo .venv/bin/multiconn emulate examples/scenarios/emu_tcp_quic.toml --out out/emu"""

RUN_EXAMPLE = """\
example:
  multiconn run examples/scenarios/bulk.toml --out out/bulk --seed 7 \\
      --set link.bottleneck.rate=30Mbit/s --set run.duration=5s
"""
VALIDATE_DESCRIPTION = """\
Check a scenario without running it: parse the TOML, apply --set overrides, check every field
and unit, and load every trace file. Prints a one-line verdict, or with --json the resolved
scenario; errors are reported as one line naming the file, the field and what is allowed.
"""
VALIDATE_EXAMPLE = """\
example:
  multiconn validate examples/scenarios/trace_lte.toml --set run.duration=30s
"""
OWD_SERIES_DESCRIPTION = """\
Generate a correlated, LTE-like one-way-delay series and write it as CSV (header
time_s,delay_ms), the format of a link's delay = { model = "series", file = ... }. The delay
is a floor (--base-ms) plus a log-normal part (--mean-ms, --cv) correlated in time
(--correlation-ms), plus occasional spikes (handovers, stalls: --spike-rate per second, each
--spike-mean-ms higher for about --spike-duration-ms). --preset picks a set of values
(default lte-moderate); options given explicitly replace the preset's. The same options and
--seed always give a byte-identical file. A one-line summary is printed unless --quiet.
"""
OWD_SERIES_EXAMPLE = """\
example:
  multiconn owd-series --preset lte-poor --duration 600s --seed 3 --out path1.csv
  multiconn owd-series --base-ms 15 --mean-ms 10 --cv 0.5 --spike-rate 0 --out calm.csv
"""
MAIN_DESCRIPTION = """\
multiconn is a deterministic packet-level simulator for transport protocols over cellular
multi-connectivity. Describe links and flows in a TOML scenario, then validate or run it;
sweep parameters over many runs into a resumable results store, and report them.
"""
PLOT_DESCRIPTION = """\
Draw the standard figures of one run (the --out folder of `multiconn run`) as PNG and SVG:
throughput per flow and per link direction; congestion window, bytes in flight and smoothed
RTT per transport flow; per multipath flow, what each path carried and its window and RTT,
with the path manager's actions; per flow over a PDCP split bearer, throughput per leg, the
reordering delay and buffer; the busy link queues and RLC buffers; per LTE cell, radio and
RLC per UE; per message flow, the one-way-delay CCDF (log delay axis) with its deadline. A run
gets the figures that apply to it. --from/--to narrow every figure to a time span; an axis
with more than 12 series draws the 8 that carry most and the others as one mean line.
"""
PLOT_EXAMPLE = """\
example:
  multiconn run examples/scenarios/mpquic_handover.toml --out out/handover
  multiconn plot out/handover                # figures in out/handover/figures
  multiconn plot out/handover --from 8s --to 12s --out out/handover/handover-figures
  multiconn report out/handover              # the same on an HTML page with the tables
"""
MAIN_EXAMPLE = """\
example:
  multiconn run examples/scenarios/bulk.toml --out out/demo
  multiconn plot out/demo
  multiconn list
  multiconn reproduce mathis --quick --out out/mathis
  multiconn COMMAND --help
"""


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set", dest="overrides", metavar="KEY=VALUE", type=_set_option, action="append",
        default=[],
        help="override a scenario value, e.g. link.bottleneck.rate=30Mbit/s or "
        "flow.bulk.size=10MB (repeatable; VALUE is read as TOML when it is valid TOML, "
        "otherwise as a string)",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With `command` (a name in `COMMANDS`), only the commands
    added with it are in the parser: `main` builds what the command line names, so that a
    command imports only the modules its own options need (the other commands' modules and
    their parsers are never loaded)."""
    from . import __version__

    parser = _Parser(prog=PROG, description=MAIN_DESCRIPTION, epilog=MAIN_EXAMPLE,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for names, add in COMMANDS:
        if command is None or command in names:
            add(commands)
    return parser


def _add_run(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    run = commands.add_parser("run", help="run a scenario and write its results",
                              description=RUN_DESCRIPTION, epilog=RUN_EXAMPLE,
                              formatter_class=fmt)
    run.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    run.add_argument("--out", required=True, metavar="DIR",
                     help="folder for the result files (created if missing)")
    run.add_argument("--seed", type=_seed, metavar="N",
                     help="master seed (overrides run.seed; default 1)")
    _add_set(run)
    run.add_argument("--csv", action="store_true", help="also write timeseries.csv")
    run.add_argument("--pcap", action="store_true", default=None,
                     help="write a pcapng capture per flow end into DIR/pcap/, for Wireshark "
                     "(as run.pcap = true; docs/pcap.md). Results are the same either way")
    run.add_argument("--pcap-filter", metavar="NAMES",
                     help="capture only these flows and the paths over these links, "
                     "comma-separated: NAME or flow:NAME, link:NAME (implies --pcap)")
    run.add_argument("--pcap-max-mb", type=float, metavar="MB",
                     help="largest capture file (default 64); writing stops there, with a "
                     "warning (implies --pcap)")
    run.add_argument("--stall-limit", type=_positive_int, metavar="N",
                     help="events allowed at one instant of virtual time before the run is "
                     "ended as stalled, its results so far kept in DIR/incomplete "
                     "(default 20000000)")
    run.add_argument("--check-invariants", action="store_true", default=None,
                     help="check, as the run goes, the rules every model must keep (bytes "
                     "conserved on each link, no delivery before serialization and delay, PDCP "
                     "COUNTs in order, stream bytes in order and once, path IDs never reused); "
                     "the first broken one ends the run with an error. Also on when "
                     "MULTICONN_CHECK_INVARIANTS=1. Results are the same either way")
    talk = run.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="no progress bar and no summary table")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="list the files written; show tracebacks of internal errors")
    run.add_argument("--json", action="store_true",
                     help="print the summary as JSON instead of the table")
    run.set_defaults(handler=cmd_run)


def _add_emulate(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    emu = commands.add_parser("emulate", help="run a scenario in real time with real stacks (root)",
                              description=EMULATE_DESCRIPTION, epilog=EMULATE_EXAMPLE,
                              formatter_class=fmt)
    emu.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    emu.add_argument("--out", required=True, metavar="DIR",
                     help="folder for the result files (created if missing)")
    emu.add_argument("--seed", type=_seed, metavar="N",
                     help="seed of the models' random streams (overrides run.seed; default 1)")
    _add_set(emu)
    emu.add_argument("--time-limit", type=float, metavar="SECONDS",
                     help="longest run when the scenario has no run.duration (default 600)")
    emu.add_argument("--budget-us", type=float, metavar="N",
                     help="lateness budget: a run whose p99 is later is flagged (default 1000)")
    emu.add_argument("--max-rate-mbps", type=float, metavar="N",
                     help="refuse links faster than this (default 1000)")
    emu.add_argument("--realtime", action="store_true",
                     help="run the emulator's loop under SCHED_FIFO: fewer late packets on a busy machine")
    emu.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    emu.add_argument("--json", action="store_true", help="print the summary as JSON")
    emu.set_defaults(handler=cmd_emulate)


def _add_validate(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    validate = commands.add_parser("validate", help="check a scenario without running it",
                                   description=VALIDATE_DESCRIPTION, epilog=VALIDATE_EXAMPLE,
                                   formatter_class=fmt)
    validate.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    _add_set(validate)
    validate.add_argument("--json", action="store_true",
                          help="print the resolved scenario as JSON")
    validate.add_argument("-v", "--verbose", action="store_true",
                          help="show tracebacks of internal errors")
    validate.set_defaults(handler=cmd_validate)


def _add_plot(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    plot = commands.add_parser("plot", help="draw the standard figures of a run",
                               description=PLOT_DESCRIPTION, epilog=PLOT_EXAMPLE,
                               formatter_class=fmt)
    plot.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of `multiconn run`")
    plot.add_argument("--out", metavar="DIR", help="folder for the figures "
                      "(default RUN_DIR/figures)")
    plot.add_argument("--format", dest="formats", choices=("png", "svg", "both"),
                      default="both", help="file format (default both)")
    plot.add_argument("--json", action="store_true", help="list the figures as JSON")
    from .plot import add_view_options

    add_view_options(plot)
    talk = plot.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="show tracebacks of internal errors")
    plot.set_defaults(handler=cmd_plot)


def _add_sweep_commands(commands: Any) -> None:
    from .sweep.commands import add_commands

    add_commands(commands, _positive_int)


def _add_studies(commands: Any) -> None:
    from .findings.command import add_command

    add_command(commands, _positive_int)


def _size_option(text: str) -> int:
    import re

    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2) if match else ""
    if not match or (unit or "B") not in SIZE_UNITS:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size; use a number and one of "
                                         f"{', '.join(SIZE_UNITS)}, e.g. 40MB")
    value = int(float(match.group(1)) * SIZE_UNITS[unit or "B"])
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': the size must be at least 1 byte")
    return value


def _names_option(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("expects a comma-separated list, e.g. sp,2")
    return names


def _duration_option(text: str) -> float:
    from .owdgen import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_owd_series(commands: Any) -> None:
    from .owdgen import PRESETS

    owd = commands.add_parser("owd-series", help="generate an LTE-like one-way-delay series (CSV)",
                              description=OWD_SERIES_DESCRIPTION, epilog=OWD_SERIES_EXAMPLE,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    owd.add_argument("--out", required=True, metavar="FILE",
                     help="CSV file to write ('-' for standard output)")
    owd.add_argument("--preset", choices=tuple(PRESETS), metavar="NAME",
                     help=f"base values: {', '.join(PRESETS)} (default lte-moderate)")
    owd.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed (default 1)")
    owd.add_argument("--duration", dest="duration_s", type=_duration_option, metavar="TIME",
                     help="length of the series, with a unit (default 60s)")
    owd.add_argument("--step", dest="step_s", type=_duration_option, metavar="TIME",
                     help="sampling interval, with a unit (default 10ms)")
    numbers = [
        ("--base-ms", "base_ms", "constant delay floor (ms)"),
        ("--mean-ms", "mean_ms", "mean of the log-normal part outside spikes (ms)"),
        ("--cv", "cv", "coefficient of variation of the log-normal part"),
        ("--correlation-ms", "correlation_ms",
         "correlation time (ms): lag-one autocorrelation exp(-step/correlation); 0: none"),
        ("--spike-rate", "spike_rate", "spikes starting per second on average; 0: none"),
        ("--spike-mean-ms", "spike_mean_ms", "mean extra delay during a spike (ms)"),
        ("--spike-duration-ms", "spike_duration_ms", "mean length of a spike (ms)"),
    ]
    for option, dest, text in numbers:
        owd.add_argument(option, dest=dest, type=float, metavar="X", help=text)
    owd.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    owd.add_argument("-v", "--verbose", action="store_true",
                     help="show tracebacks of internal errors")
    owd.set_defaults(handler=cmd_owd_series)


def _count(resolved: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        if isinstance(resolved.get(key), list):
            return len(resolved[key])
    return None


def _warn(scenario: str, overrides: Any) -> list[str]:
    """Prints the scenario's warnings (settings often not meant) on standard error; returns
    them."""
    from .runner import warnings

    lines = warnings(scenario, overrides=overrides)
    for line in lines:
        print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)
    return lines


def cmd_validate(args: argparse.Namespace) -> int:
    from .runner import validate

    resolved = validate(_scenario_path(args.scenario), overrides=args.overrides)
    _warn(_scenario_path(args.scenario), args.overrides)
    if args.json:
        from .result import json_text

        sys.stdout.write(json_text(resolved))
        return EXIT_OK
    details = []
    links, flows = _count(resolved, "link", "links"), _count(resolved, "flow", "flows")
    if links is not None:
        details.append(f"{links} link{'s' if links != 1 else ''}")
    if flows is not None:
        details.append(f"{flows} flow{'s' if flows != 1 else ''}")
    suffix = f" ({', '.join(details)})" if details else ""
    print(f"{args.scenario}: valid{suffix}")
    return EXIT_OK


def _scenario_path(path: str) -> str:
    from .source import read_scenario_file

    source = read_scenario_file(path)  # a missing or unreadable file is bad input
    if "[experiment]" in source.text:
        import tomllib

        try:
            is_sweep = "experiment" in tomllib.loads(source.text)
        except tomllib.TOMLDecodeError:
            is_sweep = False  # the simulator reports the syntax error with its line
        if is_sweep:
            raise BadInput(f"{path}: this is a sweep file (it has [experiment]): run it with "
                           f"`multiconn sweep {path} --out DIR`")
    return path


def cmd_owd_series(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from .owdgen import (OwdSeriesError, OwdSeriesParams, describe, generate, make_params,
                         to_csv_text)

    values = {f.name: getattr(args, f.name) for f in fields(OwdSeriesParams)}
    try:
        series = generate(make_params(args.preset, **values), args.seed)
    except OwdSeriesError as exc:
        raise BadInput(f"{exc.option}: {exc.message}") from exc
    text = to_csv_text(series)
    if args.out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        with open(args.out, "wb") as out:
            out.write(text.encode("ascii"))
    except OSError as exc:
        raise BadInput(f"cannot write '{args.out}': {exc.strerror or exc}") from exc
    if not args.quiet:
        s = describe(series)
        spikes = int(s["spikes"])
        plural = "" if spikes == 1 else "s"
        print(f"{args.out}: {int(s['points'])} points over {s['duration_s']:g} s; delay mean "
              f"{s['mean_ms']:.1f} ms, median {s['median_ms']:.1f} ms, 99.9th percentile "
              f"{s['p999_ms']:.1f} ms, max {s['max_ms']:.1f} ms; {spikes} spike{plural}")
    return EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    import json

    from .plot import plot_run, view_options

    formats = ("png", "svg") if args.formats == "both" else (args.formats,)
    figures = plot_run(args.run_dir, args.out, formats, **view_options(args))
    if args.json:
        listing = [{"stem": f.stem, "title": f.title, "files": [str(p) for p in f.files]}
                   for f in figures]
        sys.stdout.write(json.dumps(listing, indent=2) + "\n")
    elif not args.quiet:
        for f in figures:
            print(f"{f.files[0]}  {f.title}")
    return EXIT_OK


def cmd_emulate(args: argparse.Namespace) -> int:
    from .emulate import emulate, summary_lines

    summary = emulate(_scenario_path(args.scenario), args.out, overrides=args.overrides,
                      seed=args.seed, time_limit=args.time_limit, budget_us=args.budget_us,
                      max_rate_mbps=args.max_rate_mbps, realtime=args.realtime, quiet=args.quiet)
    if args.json:
        from .result import json_text

        sys.stdout.write(json_text(summary))
        return EXIT_OK
    for line in summary_lines(summary):
        print(line)
    print(f"results: {args.out}/summary.json, timeseries.parquet, flows/<name>/ (logs, reports, qlogs)")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from .report import print_summary
    from .runner import run

    from .errors import LongRunWarning, PcapLimitWarning
    from .runner import pcap_overrides

    if not args.out.strip():
        raise BadInput(f"--out {args.out!r}: give a folder for the results, e.g. --out out/run1")
    pcap: bool | str | None = args.pcap
    if args.pcap_filter is not None:
        pcap = args.pcap_filter
    elif args.pcap_max_mb is not None:
        pcap = True
    overrides = [*(args.overrides or []), *pcap_overrides(pcap, args.pcap_max_mb)]
    shown: list[str] = []

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        # A run of many events is told of before it starts, in the CLI's words.
        if issubclass(category, LongRunWarning):
            shown.append(str(message))
            print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings():
            # Printed below, after the run, as the scenario's warnings are.
            warnings.simplefilter("ignore", PcapLimitWarning)
            warnings.simplefilter("always", LongRunWarning)
            warnings.showwarning = show
            result = run(_scenario_path(args.scenario), seed=args.seed, overrides=overrides,
                         progress=not args.quiet, stall_limit=args.stall_limit,
                         check_invariants=args.check_invariants)
    except InvariantViolation as violation:
        print(f"{PROG}: error: {_one_line(str(violation))}", file=sys.stderr, flush=True)
        return EXIT_INTERNAL
    except RunStalled as stall:
        kept = f"{args.out}/incomplete"
        try:
            stall.partial.write(kept)  # type: ignore[attr-defined]
        except OSError:
            kept = "(not kept: the folder could not be written)"
        print(f"{PROG}: error: {_one_line(str(stall))}; the results up to then are in {kept}",
              file=sys.stderr, flush=True)
        return EXIT_INTERNAL
    printed = [*_warn(_scenario_path(args.scenario), overrides), *shown]
    # What the run itself found (a burst read above capacity); the scenario's own warnings,
    # recorded in the summary too, were printed just above.
    for line in result.summary.get("warnings") or []:
        if line not in printed:
            print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)
    for line in result.pcap_warnings:
        print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)
    try:
        written = result.write(args.out, csv=args.csv)
    except OSError as exc:
        raise BadInput(f"cannot write results to '{args.out}': {exc.strerror or exc}") from exc
    if args.json:
        from .result import json_text

        sys.stdout.write(json_text(result.summary))
    elif not args.quiet:
        from rich.console import Console

        console = Console()
        console.print(f"results in {args.out}", highlight=False)
        print_summary(result.summary, console, out=args.out)
    if args.verbose:
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


DRIVE_DESCRIPTION = """\
Drive tests of the multi-operator study: generate a synthetic per-second RSRP table, or
estimate a table's per-second capacities and print the study's Table 2 (available cells) and
Table 3 (each operator, best single path, multipath: mean, median, percentiles).
"""
DRIVE_GENERATE_DESCRIPTION = """\
Generate a synthetic multi-operator drive test (two operators, an 800 MHz and an 1800 MHz
carrier each) as a CSV table in the long format: time_s, operator, earfcn, cell_id, rsrp_dbm,
x_m, y_m, speed_mps. The same preset, seed and duration always give a byte-identical file.
Prints one line saying what was written.
"""
DRIVE_GENERATE_EXAMPLE = """\
example:
  multiconn drive generate --preset residential --seed 1 --duration 600s --out drive.csv
"""
DRIVE_ANALYSE_DESCRIPTION = """\
Estimate a drive table second by second (available cells, SINR, the study's capacity model)
and print Table 2 (the mean number of available cells and their distribution) and Table 3
(per level: mean, median, p20, p10, p5, p1, p0.1 in Mbit/s). With --out, also write
capacities.parquet (one row per second), channels.csv (each channel's capacity per second, for
drive download --channels), stats.json, capacity.png (the capacity of each
channel's strongest cell, per second and as 5 s means) and available_cells.png (the CDF of
available cells). TABLE is the long format (CSV or .parquet) or, with --format gnettrack, a
G-NetTrack Pro CSV (serving RSRP and the neighbour's NRxRSRP; cells keep their value for
2 s across the logger's gaps unless --hold is given). With --format 5gophers, TABLE is a
5Gophers mobility trace (per-second throughput of several carriers at once, no RSRP): each
carrier's throughput is its channel's capacity, a carrier is available where it is above 0
(or --min-capacity), and the levels and statistics come from those capacities directly.
"""
DRIVE_ANALYSE_EXAMPLE = """\
example:
  multiconn drive analyse drive.csv --out out/drive
  multiconn drive analyse B_2020.01.16_09.56.56.csv --format gnettrack --json
  multiconn drive analyse car-driving-trace-1.csv --format 5gophers
  multiconn drive analyse drive.csv --bandwidth 1300=20 --bandwidth 1500=20
"""


DRIVE_FORMATS = ("long", "gnettrack", "5gophers")
DRIVE_DOWNLOAD_DESCRIPTION = """\
Run the multi-operator study's download experiment: for each stack (picoquic bbr, cubic,
fast, reno; Linux MPTCP 5.15) and each channel-usage case (sp, 1, 2, 3, 4), one download
from each start offset in the trace. Prints our table beside the study's (Table 4 for the
residential segment, Table 5 for the road) and whether the study's findings hold; writes every
run's scenario, runs.csv, table.csv, comparison.csv, findings.json, report.md and goodput.png.
"""
DRIVE_DOWNLOAD_EXAMPLE = """\
example:
  multiconn drive download --segment residential --out out/residential
  multiconn drive download --segment road --stacks cubic,mptcp --offsets 6 --out out/road
  multiconn drive analyse drive.csv --out out/drive
  multiconn drive download --channels out/drive/channels.csv --out out/mine
  multiconn drive download --channels out/drive/channels.csv --from 480s --offsets 1 --out out/at480
"""
SIZE_UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20,
              "GiB": 2**30}


def _bandwidths(values: list[str] | None) -> dict[str, float]:
    """`--bandwidth EARFCN=MHZ` options as `capacity.carrier_bandwidth_mhz` (the radio model
    checks the values)."""
    out: dict[str, float] = {}
    for value in values or []:
        earfcn, sep, mhz = value.partition("=")
        earfcn, mhz = earfcn.strip(), mhz.strip()
        if not sep or not earfcn.isdigit():
            raise BadInput(f"--bandwidth {value}: must be EARFCN=MHZ, e.g. 1300=20")
        try:
            number = float(mhz)
        except ValueError:
            raise BadInput(f"--bandwidth {value}: {mhz!r} is not a number of MHz") from None
        key = str(int(earfcn))
        if key in out and out[key] != number:
            raise BadInput(f"--bandwidth {value}: EARFCN {key} was given {out[key]:g} MHz "
                           "already")
        out[key] = number
    return out


def _add_drive(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    drive = commands.add_parser("drive", help="generate or analyse a drive test (Tables 2, 3)",
                                description=DRIVE_DESCRIPTION, formatter_class=fmt)
    sub = drive.add_subparsers(dest="drive_command", metavar="ACTION", required=True)
    gen = sub.add_parser("generate", help="write a synthetic drive table (CSV)",
                         description=DRIVE_GENERATE_DESCRIPTION, epilog=DRIVE_GENERATE_EXAMPLE,
                         formatter_class=fmt)
    gen.add_argument("--preset", default="residential", metavar="NAME",
                     help="residential, road, rural or calibration (default residential)")
    gen.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed (default 1)")
    gen.add_argument("--duration", dest="duration_s", type=_duration_option, metavar="TIME",
                     help="length with a unit, whole seconds (default: the preset's, 3600 s "
                     "for most)")
    gen.add_argument("--out", required=True, metavar="FILE",
                     help="CSV file to write ('-' for standard output)")
    gen.add_argument("-v", "--verbose", action="store_true",
                     help="show tracebacks of internal errors")
    gen.set_defaults(handler=cmd_drive_generate)

    ana = sub.add_parser("analyse", aliases=["analyze"], help="print Tables 2 and 3 of a drive "
                         "table, write capacities and figures", description=DRIVE_ANALYSE_DESCRIPTION,
                         epilog=DRIVE_ANALYSE_EXAMPLE, formatter_class=fmt)
    ana.add_argument("table", metavar="TABLE", help="drive table (CSV or .parquet)")
    ana.add_argument("--format", dest="table_format", choices=DRIVE_FORMATS,
                     default="long", help="TABLE's format (default long)")
    ana.add_argument("--load", type=float, metavar="QL",
                     help="network load of the interferers, 0 to 1 (default 0.1; RSRP tables)")
    ana.add_argument("--interference", choices=("all_visible", "same_carrier"),
                     help="which cells interfere (default all_visible; RSRP tables)")
    ana.add_argument("--bandwidth", dest="bandwidths", action="append", metavar="EARFCN=MHZ",
                     help="channel bandwidth of one carrier (1.4, 3, 5, 10, 15 or 20 MHz; "
                     "repeatable; default 10 MHz for every carrier; RSRP tables)")
    ana.add_argument("--hold", dest="hold_s", type=int, metavar="S",
                     help="seconds a cell (a carrier with --format 5gophers) keeps its last "
                     "value without a sample (default 0; 2 with --format gnettrack)")
    ana.add_argument("--min-capacity", dest="min_capacity_mbps", type=float, metavar="MBPS",
                     help="--format 5gophers: a carrier is available from this capacity on "
                     "(default: any capacity above 0)")
    ana.add_argument("--protocol", metavar="NAME",
                     help="--format 5gophers: the rows of this protocol (e.g. TCP)")
    ana.add_argument("--connections", dest="num_tcp_conn", type=int, metavar="N",
                     help="--format 5gophers: the rows with this num_tcp_conn")
    ana.add_argument("--out", metavar="DIR", help="folder for capacities.parquet, stats.json "
                     "and the figures")
    ana.add_argument("--json", action="store_true", help="print stats.json instead of tables")
    ana.add_argument("-v", "--verbose", action="store_true",
                     help="show tracebacks of internal errors")
    ana.set_defaults(handler=cmd_drive_analyse)

    dl = sub.add_parser("download", help="the study's download experiments (Tables 4, 5): "
                        "stacks x cases x start offsets", description=DRIVE_DOWNLOAD_DESCRIPTION,
                        epilog=DRIVE_DOWNLOAD_EXAMPLE, formatter_class=fmt)
    source = dl.add_mutually_exclusive_group()
    source.add_argument("--segment", choices=("residential", "road"),
                        help="a synthetic stand-in for one of the study's segments, compared "
                        "with its table (default residential)")
    source.add_argument("--channels", metavar="FILE", help="a channel table (CSV or .parquet: "
                        "time_s and one column of Mbit/s per channel; `drive analyse --out` "
                        "writes one)")
    dl.add_argument("--cases", type=_names_option, default=None, metavar="LIST",
                    help="comma-separated cases (default sp,1,2,3,4)")
    dl.add_argument("--stacks", type=_names_option, default=None, metavar="LIST",
                    help="comma-separated stacks (default bbr,cubic,fast,reno,mptcp)")
    dl.add_argument("--offsets", type=int, default=18, metavar="N",
                    help="start offsets per case and stack (default 18)")
    dl.add_argument("--offset-step", dest="offset_step", type=_duration_option, default=10.0,
                    metavar="TIME", help="time between start offsets (default 10s)")
    dl.add_argument("--from", dest="first", type=_duration_option, default=0.0, metavar="TIME",
                    help="the first start offset: the runs read the drive from this second "
                    "on, e.g. 480s (default 0s; less than the drive's length)")
    dl.add_argument("--size", type=_size_option, default=40_000_000, metavar="SIZE",
                    help="download size (default 40MB = 40 000 000 bytes)")
    dl.add_argument("--horizon", type=_duration_option, default=600.0, metavar="TIME",
                    help="a run that takes longer counts as incomplete (default 600s)")
    dl.add_argument("--scale", type=float, metavar="X",
                    help="multiply every capacity by X (default: a segment is calibrated to "
                    "the study's SP capacity; a channel table is taken as it is)")
    dl.add_argument("--handover", dest="handover", action="append", metavar="KEY=VALUE",
                    help="a case parameter, e.g. hysteresis_db=1 or preset=realistic_all "
                    "(repeatable; docs/multi-operator.md lists them)")
    dl.add_argument("--testbed", default="ideal", metavar="NAME",
                    help="what the emulation does to the links: ideal (default: the physical "
                    "model) or study (the study's Mininet/tc emulation; docs/multi-operator.md)")
    dl.add_argument("--mechanism", dest="mechanisms", action="append", metavar="NAME",
                    help="add one testbed mechanism to --testbed, e.g. netem_steps "
                    "(repeatable; multiconn.testbeds.MECHANISMS lists them)")
    curve = dl.add_mutually_exclusive_group()
    curve.add_argument("--delay-curve", dest="delay_curve", metavar="CURVE",
                       help="each access link's capacity -> one-way delay curve: lte (default: "
                       "the study's, 20 ms at 50 Mbit/s, held at 100 ms from 200 Mbit/s), nr "
                       "(11.85 ms at every capacity: half 5Gophers' 5G mmWave first-hop RTT) "
                       "or a .toml file of the curve's fields (docs/multi-operator.md)")
    curve.add_argument("--delay", dest="delay_ms", type=_duration_option, metavar="TIME",
                       help="one one-way delay for every access link and capacity, e.g. 10ms")
    dl.add_argument("--queue", metavar="SIZE",
                    help="each access link's queue: N packets (default 100packets), N ms of "
                    "its mean capacity (e.g. 50ms) or X bandwidth-delay products (e.g. 1.5BDP)")
    dl.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: every "
                    "core)")
    dl.add_argument("--out", required=True, metavar="DIR", help="folder for the scenarios, "
                    "runs.csv, table.csv, report.md and goodput.png")
    dl.add_argument("--json", action="store_true", help="print findings.json instead of tables")
    dl.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    dl.add_argument("-v", "--verbose", action="store_true",
                    help="show tracebacks of internal errors")
    dl.set_defaults(handler=cmd_drive_download)


def cmd_drive_generate(args: argparse.Namespace) -> int:
    from .drive import generate_csv

    duration = args.duration_s
    if duration is not None and (duration != int(duration) or duration < 1):
        raise BadInput(f"--duration must be a whole number of seconds, at least 1 s, "
                       f"got {duration:g} s")
    text = generate_csv(args.preset, args.seed, None if duration is None else int(duration))
    rows = text.count("\n") - 1
    if args.out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as exc:
        raise BadInput(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"wrote {args.out}: {rows} rows, preset {args.preset}, seed {args.seed}")
    return EXIT_OK


STUDY_TABLE2 = "the study: 2.97 over its whole data set, 3.99 residential, 3.19 road"
"""The multi-operator study's Table 2 (mean available cells), printed beside ours."""


def _format_table2(analysis: Any) -> str:
    lines = ["Table 2: available cells per second",
             f"  seconds               {analysis.stats['seconds']}",
             f"  mean available cells  {analysis.mean_available:.2f}   ({STUDY_TABLE2})",
             f"  mean visible cells    {analysis.mean_visible:.2f}   (the study: 4.26)",
             "  n   share   P(<= n)"]
    for n, share, cdf in analysis.available_cdf.itertuples(index=False):
        lines.append(f"  {n:<3d} {share:6.3f}  {cdf:6.3f}")
    return "\n".join(lines)


def _format_table3(analysis: Any) -> str:
    table = analysis.table3
    width = max(len(str(level)) for level in table.index) + 2
    header = "level".ljust(width) + "".join(f"{c:>9}" for c in table.columns)
    lines = ["Table 3: capacity (Mbit/s)", "  " + header]
    for level, row in table.iterrows():
        lines.append("  " + str(level).ljust(width) + "".join(f"{v:9.2f}" for v in row))
    import pandas as pd

    from .downloads import STUDY_FILE

    study = pd.read_csv(STUDY_FILE.parent / "multi_operator_capacity.csv", index_col="level")
    lines.append("  the study (its whole data set, 33 h, load 0.1):")
    for level, row in study.iterrows():
        lines.append("  " + str(level).ljust(width) + "".join(f"{v:9.2f}" for v in row))
    return "\n".join(lines)


def _handover_options(values: list[str] | None) -> dict[str, object]:
    """`--handover KEY=VALUE` options as case parameters (numbers, true/false or names; the
    radio model checks them)."""
    out: dict[str, object] = {}
    for value in values or []:
        key, sep, raw = value.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise BadInput(f"--handover {value}: must be KEY=VALUE, e.g. hysteresis_db=1")
        parsed: object = raw
        if raw in ("true", "false"):
            parsed = raw == "true"
        else:
            try:
                parsed = int(raw) if raw.lstrip("-").isdigit() else float(raw)
            except ValueError:
                parsed = raw
        out[key] = parsed
    return out


def cmd_drive_download(args: argparse.Namespace) -> int:
    import json
    import time
    from pathlib import Path

    from .cases import CASES, STACKS, ChannelTable, parse_queue
    from .download_report import write_report
    from .downloads import Experiment, delay_curve, offsets, scaled, summarise
    from .downloads import run as run_downloads
    from .testbeds import testbed

    if args.offsets < 1:
        raise BadInput(f"--offsets {args.offsets}: must be at least 1")
    if args.offset_step != int(args.offset_step):
        raise BadInput(f"--offset-step {args.offset_step:g}s: must be whole seconds")
    if args.first != int(args.first) or args.first < 0:
        raise BadInput(f"--from {args.first:g}s: must be whole seconds, at least 0 s")
    if args.horizon != int(args.horizon) or args.horizon < 1:
        raise BadInput(f"--horizon {args.horizon:g}s: must be whole seconds, at least 1 s")
    if args.jobs is not None and args.jobs < 1:
        raise BadInput(f"--jobs {args.jobs}: must be at least 1")
    options = {"cases": args.cases or CASES, "stacks": args.stacks or tuple(STACKS),
               "offsets_s": offsets(args.offsets, int(args.offset_step), int(args.first)),
               "size_bytes": args.size, "horizon_s": int(args.horizon),
               "handover": _handover_options(args.handover),
               "testbed": testbed(args.testbed, args.mechanisms or ())}
    if args.delay_ms is not None:
        if args.delay_ms < 0:
            raise BadInput(f"--delay {args.delay_ms * 1000:g}ms: must be at least 0")
        options["delay"] = {"form": "constant", "constant_ms": args.delay_ms * 1000}
    elif args.delay_curve is not None:
        options["delay"] = delay_curve(args.delay_curve)
    if args.queue is not None:
        parse_queue(args.queue)
        if "minitopo_queue" in options["testbed"].mechanisms:  # type: ignore[attr-defined]
            raise BadInput(f"--queue {args.queue}: the {options['testbed'].name} testbed "  # type: ignore[attr-defined]
                           "sizes the queues itself (minitopo_queue); give one or the other")
        options["queue"] = args.queue
    if args.channels:
        table = ChannelTable.read(args.channels)
        scale = 1.0 if args.scale is None else args.scale
        experiment = Experiment(name=Path(args.channels).stem, table=scaled(table, scale),
                                scale=scale, source=args.channels, **options)
    else:
        experiment = Experiment.for_segment(args.segment or "residential", **options)
        if args.scale is not None:
            experiment = Experiment(name=experiment.name,
                                    table=scaled(experiment.table, args.scale / experiment.scale),
                                    scale=args.scale, **options)
    if args.first >= experiment.table.seconds:
        raise BadInput(f"--from {args.first:g}s: the drive is {experiment.table.seconds} s long; "
                       "the first start offset must be less than that")
    # Before the runs, which take long: a trace beyond the delay curve's range.
    for line in experiment.warnings():
        print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    runs = run_downloads(experiment, args.out, jobs=args.jobs,
                         progress=not args.quiet and not args.json)
    wall = time.perf_counter() - started
    table = summarise(runs)
    result = write_report(experiment, runs, table, args.out, wall_s=wall)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    _print_download_table(Path(args.out), result)
    return 0


def _print_download_table(out: Any, result: dict[str, Any]) -> None:
    import pandas as pd

    table = pd.read_csv(out / "table.csv", dtype={"case": str})
    compared = out / "comparison.csv"
    study = pd.read_csv(compared, dtype={"case": str}) if compared.exists() else None
    print(f"{result['experiment']}: {result['runs']} runs in {result['wall_s']:.1f} s "
          f"({result['incomplete']} incomplete)")
    print(f"{'stack':<7} {'case':>4} {'goodput':>15} {'MP cap':>7} {'SP cap':>7} "
          f"{'compl. s':>9} {'HOs':>5}" + ("   study: goodput  MP cap  compl." if study is not None else ""))
    for _, row in table.iterrows():
        line = (f"{row['stack']:<7} {row['case']:>4} "
                f"{row['goodput_mbps']:>7.2f} ± {row['goodput_sd']:<5.2f} "
                f"{row['mp_capacity_mbps']:>7.2f} {row['sp_capacity_mbps']:>7.2f} "
                f"{row['completion_s']:>9.2f} {row['handovers']:>5.1f}")
        if study is not None:
            s = study[(study["stack"] == row["stack"]) & (study["case"] == row["case"])]
            if not s.empty:
                line += (f"   {s['goodput_mbps_study'].iloc[0]:>6.2f} ± "
                         f"{s['goodput_sd_study'].iloc[0]:<5.2f}"
                         f" {s['mp_capacity_mbps_study'].iloc[0]:>6.2f}"
                         f" {s['completion_s_study'].iloc[0]:>7.2f}")
        if row["incomplete"]:
            line += f"  ({row['incomplete']} of {row['runs']} runs incomplete)"
        print(line)
    print("findings (ours / study):")
    for f in result["findings"]:  # type: ignore[attr-defined]
        verdict = {True: "holds", False: "no", None: "-"}
        print(f"  {f['text']}: {verdict[f['holds']]} / {verdict[f['study']]}")
    print(f"wrote {out / 'report.md'}, {out / 'goodput.png'}, {out / 'table.csv'}")


def cmd_drive_analyse(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from .cases import ChannelTable
    from .drive import (GNETTRACK_HOLD_S, analyse, analyse_capacities, plot_available,
                        plot_capacity, read_5gophers, read_drive_table, read_gnettrack)

    rsrp_only = {"--load": args.load, "--interference": args.interference,
                 "--bandwidth": args.bandwidths}
    capacity_only = {"--min-capacity": args.min_capacity_mbps, "--protocol": args.protocol,
                     "--connections": args.num_tcp_conn}
    if args.table_format == "5gophers":
        given = [name for name, value in rsrp_only.items() if value is not None]
        if given:
            raise BadInput(f"{given[0]} applies to RSRP tables, not to --format 5gophers "
                           "(its throughputs are the capacities)")
        table = read_5gophers(args.table, protocol=args.protocol,
                              num_tcp_conn=args.num_tcp_conn)
        min_capacity = 0.0 if args.min_capacity_mbps is None else args.min_capacity_mbps
        analysis = analyse_capacities(table, min_capacity_mbps=min_capacity,
                                      hold_s=0 if args.hold_s is None else args.hold_s,
                                      name=args.table)
    else:
        given = [name for name, value in capacity_only.items() if value is not None]
        if given:
            raise BadInput(f"{given[0]} applies to --format 5gophers only")
        if args.table_format == "gnettrack":
            table = read_gnettrack(args.table)
            hold = GNETTRACK_HOLD_S if args.hold_s is None else args.hold_s
        else:
            table = read_drive_table(args.table)
            hold = 0 if args.hold_s is None else args.hold_s
        params: dict[str, Any] = {}
        bandwidths = _bandwidths(args.bandwidths)
        if bandwidths:
            params["capacity"] = {"carrier_bandwidth_mhz": bandwidths}
        analysis = analyse(table, load=0.1 if args.load is None else args.load,
                           interference=args.interference or "all_visible", hold_s=hold,
                           params=params, name=args.table)
    stats = {"table": args.table, "format": args.table_format, **analysis.stats}
    written = []
    if args.out:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            analysis.capacities.to_parquet(out / "capacities.parquet", index=False)
            ChannelTable.from_analysis(analysis).to_frame().to_csv(out / "channels.csv",
                                                                   index=False)
            (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot write into {out}: {exc.strerror or exc}") from None
        written = [out / "capacities.parquet", out / "channels.csv", out / "stats.json",
                   *plot_capacity(analysis, out), *plot_available(analysis, out)]
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print(_format_table2(analysis))
        print()
        print(_format_table3(analysis))
        if written:
            print()
            print(f"wrote {', '.join(p.name for p in written)} in {args.out}")
    return EXIT_OK


COMMANDS: tuple[tuple[tuple[str, ...], Callable[[Any], None]], ...] = (
    (("run",), _add_run),
    (("emulate",), _add_emulate),
    (("validate",), _add_validate),
    (("plot",), _add_plot),
    (("sweep", "list", "reproduce", "results", "report"), _add_sweep_commands),
    (("studies",), _add_studies),
    (("owd-series",), _add_owd_series),
    (("drive",), _add_drive),
)
"""The commands, in the order `--help` lists them: the names each function adds to the
subparsers (the sweep commands come as one group, from `multiconn.sweep.commands`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `multiconn` command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    named = argv[0] if argv and any(argv[0] in names for names, _ in COMMANDS) else None
    args = build_parser(named).parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    try:
        return int(args.handler(args))
    except (ScenarioError, ScenarioFileError, BadInput, SweepError, StoreError,
            BackendError, RunFolderError, DriveTableError, EmulationError,
            PlotOptionError, FindingsError) as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except EmulationFailed as exc:
        _error(str(exc))
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of our output went away (`multiconn list | head`): nothing more to say.
        # Point stdout at /dev/null so that the interpreter's final flush does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except BaseException as exc:  # includes pyo3's PanicException, a BaseException
        if isinstance(exc, SystemExit):
            raise
        if verbose:
            traceback.print_exception(exc, file=sys.stderr)
        kind = "Rust panic" if type(exc).__name__ == "PanicException" else type(exc).__name__
        hint = "" if verbose else " (run with --verbose for the traceback)"
        print(f"{PROG}: internal error: {kind}: {_one_line(str(exc))}{hint}",
              file=sys.stderr, flush=True)
        return EXIT_INTERNAL
