"""The `multiconn` command: `run` and `validate` a scenario; `sweep`, `list`, `reproduce`,
`results` and `report` (see multiconn.sweep.commands); `owd-series` (see multiconn.owdgen).

Exit codes: 0 success; 2 bad input (invalid scenario or sweep, unreadable file, bad option),
reported as one line `multiconn: error: <message>` on stderr; 3 a sweep finished with failed
runs; 1 an internal error (one line, plus the traceback with `--verbose`); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from ._native import ScenarioError
from .errors import BackendError, RunFolderError, RunStalled, StoreError, SweepError
from .source import ScenarioFileError, parse_set_option
from .sweep.commands import add_commands

PROG = "multiconn"
EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


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
qlog/<flow>_<client|server>.sqlog for QUIC flows with qlog = true and, with --csv,
timeseries.csv (and messages.csv).
The same scenario and seed always give the same files (apart from wall_time_s). A short
summary table is printed afterwards, and runs longer than about a second show a progress bar.
"""
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
reordering delay and buffer; the link queues; per message flow, the one-way-delay CCDF with
its deadline. A run gets the figures that apply to it.
"""
PLOT_EXAMPLE = """\
example:
  multiconn run examples/scenarios/mpquic_handover.toml --out out/handover
  multiconn plot out/handover                # figures in out/handover/figures
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


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog=PROG, description=MAIN_DESCRIPTION, epilog=MAIN_EXAMPLE,
                     formatter_class=fmt)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    run.add_argument("--stall-limit", type=_positive_int, metavar="N",
                     help="events allowed at one instant of virtual time before the run is "
                     "ended as stalled, its results so far kept in DIR/incomplete "
                     "(default 20000000)")
    talk = run.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="no progress bar and no summary table")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="list the files written; show tracebacks of internal errors")
    run.add_argument("--json", action="store_true",
                     help="print the summary as JSON instead of the table")
    run.set_defaults(handler=cmd_run)

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

    plot = commands.add_parser("plot", help="draw the standard figures of a run",
                               description=PLOT_DESCRIPTION, epilog=PLOT_EXAMPLE,
                               formatter_class=fmt)
    plot.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of `multiconn run`")
    plot.add_argument("--out", metavar="DIR", help="folder for the figures "
                      "(default RUN_DIR/figures)")
    plot.add_argument("--format", dest="formats", choices=("png", "svg", "both"),
                      default="both", help="file format (default both)")
    plot.add_argument("--json", action="store_true", help="list the figures as JSON")
    talk = plot.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="show tracebacks of internal errors")
    plot.set_defaults(handler=cmd_plot)
    add_commands(commands, _positive_int)
    _add_owd_series(commands)
    return parser


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


def cmd_validate(args: argparse.Namespace) -> int:
    from .runner import validate

    resolved = validate(_scenario_path(args.scenario), overrides=args.overrides)
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

    from .plot import plot_run

    formats = ("png", "svg") if args.formats == "both" else (args.formats,)
    figures = plot_run(args.run_dir, args.out, formats)
    if args.json:
        listing = [{"stem": f.stem, "title": f.title, "files": [str(p) for p in f.files]}
                   for f in figures]
        sys.stdout.write(json.dumps(listing, indent=2) + "\n")
    elif not args.quiet:
        for f in figures:
            print(f"{f.files[0]}  {f.title}")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from .report import print_summary
    from .runner import run

    try:
        result = run(_scenario_path(args.scenario), seed=args.seed, overrides=args.overrides,
                     progress=not args.quiet, stall_limit=args.stall_limit)
    except RunStalled as stall:
        kept = f"{args.out}/incomplete"
        try:
            stall.partial.write(kept)  # type: ignore[attr-defined]
        except OSError:
            kept = "(not kept: the folder could not be written)"
        print(f"{PROG}: error: {_one_line(str(stall))}; the results up to then are in {kept}",
              file=sys.stderr, flush=True)
        return EXIT_INTERNAL
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `multiconn` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    try:
        return int(args.handler(args))
    except (ScenarioError, ScenarioFileError, BadInput, SweepError, StoreError,
            BackendError, RunFolderError) as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
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
