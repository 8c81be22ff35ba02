"""The sweep commands of the `multiconn` CLI: sweep, list, reproduce, results, report.

Exit codes follow the CLI's: 0 success, 2 bad input (invalid sweep file, unknown experiment,
missing store), 3 the sweep finished but some runs failed (they are listed), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich loads when something is printed: the CLI starts quickly
    from rich.console import Console

EXIT_RUNS_FAILED = 3


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)

SWEEP_DESCRIPTION = """\
Run every point of a sweep file (a base scenario, parameters to sweep, repetitions) into an
output folder holding a results store (results.sqlite). Every point is validated before the
first run. Runs already in the store are skipped, so an interrupted sweep (even kill -9) is
resumed by running the same command again. A failed run is recorded with its error and the
sweep goes on; failures are listed at the end (exit code 3). Running the command again skips
a run that failed by an error of its own (it would fail again; --retry-failed runs it), but
runs again one whose worker process was killed under it (by the OOM killer, say).
"""
SWEEP_EXAMPLE = """\
examples:
  multiconn sweep sweeps/rate.toml --out out/rate --jobs 2
  multiconn sweep sweeps/rate.toml --out out/rate --backend dask --scheduler tcp://head:8786
"""
LIST_DESCRIPTION = """\
List the experiment catalogue: one line per experiment with its runs (points x repetitions)
and title. Folders in MULTICONN_CATALOG (':'-separated) come before the built-in catalogue.
"""
REPRODUCE_DESCRIPTION = """\
Run catalogue experiments into an output folder, then write one report. Names may be globs
('dc-*' is the whole dual-connectivity study). --quick runs each experiment's smoke version
(fewer points, repetitions and shorter runs).
"""
REPRODUCE_EXAMPLE = """\
example:
  multiconn reproduce mathis --quick --out out/mathis-quick
  multiconn reproduce 'dc-batch-size*' --out out/dc-batch-size
"""
RESULTS_DESCRIPTION = """\
Print or write the results of an output folder: one row per run and flow with experiment,
parameter, value, one column per axis, rep, seed, flow, transport, cc, profile, goodput_mbps,
bytes_delivered, completion_s, the sweep's extra metrics, and per run jain_fairness, normalised_jain
and min_normalised.
"""
REPORT_DESCRIPTION = """\
Write an HTML report of an output folder: per experiment its plots (means over repetitions
with ± std or 95 % confidence-interval error bars, heatmaps, throughput-delay plots; PNG and
SVG), tables, published values beside ours, failures.
Given the folder of a single `multiconn run`, the page shows that run: its summary tables
(flows, links, paths, PDCP legs) and its standard figures (see `multiconn plot`).
"""


def _add_run_options(parser: argparse.ArgumentParser, positive_int: Any) -> None:
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder (created if missing; reused to resume)")
    parser.add_argument("--jobs", "-j", type=positive_int, metavar="N",
                        help="parallel runs (default: all cores)")
    parser.add_argument("--backend", choices=("local", "dask", "emulate"), default="local",
                        help="local worker processes (default), a Dask cluster, or the emulator "
                        "(real stacks in real time, one run at a time; root)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="address of a running Dask scheduler (with --backend dask); "
                        "without it a LocalCluster of --jobs workers is started")
    parser.add_argument("--reps", type=positive_int, metavar="N",
                        help="repetitions per point (replaces the sweep's)")
    parser.add_argument("--quick", action="store_true",
                        help="run the sweep's short smoke version ([quick] section)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="run again the runs recorded as failed by an error of their own "
                        "(runs whose worker process died run again without it)")
    parser.add_argument("--max-runs", type=positive_int, metavar="N",
                        help="plan at most N runs, points x repetitions (default 100000: "
                        "a larger sweep is refused before any point is built)")
    parser.add_argument("--rerun", nargs="?", const="all", metavar="FILTER",
                        help="run again runs already in the store: all of them, or those "
                        "matching FILTER, comma-separated AXIS=LABEL, point=N, rep=N "
                        "conditions (e.g. --rerun 'batch=50,rep=0')")
    _add_talk(parser)


def _add_talk(parser: argparse.ArgumentParser) -> None:
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="say more; show tracebacks of internal errors")
    parser.add_argument("--json", action="store_true", help="machine-readable output (JSON)")


def add_commands(commands: Any, positive_int: Any) -> None:
    """Adds the sweep commands to the CLI's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    sweep = commands.add_parser("sweep", help="run a sweep file into a results store",
                                description=SWEEP_DESCRIPTION, epilog=SWEEP_EXAMPLE,
                                formatter_class=fmt)
    sweep.add_argument("sweep_file", metavar="FILE", help="sweep file (TOML)")
    _add_run_options(sweep, positive_int)
    sweep.set_defaults(handler=cmd_sweep)

    listing = commands.add_parser("list", help="list the experiment catalogue",
                                  description=LIST_DESCRIPTION, formatter_class=fmt)
    listing.add_argument("--catalog", action="append", metavar="DIR",
                         help="also search this folder of sweep files (repeatable)")
    listing.add_argument("--json", action="store_true", help="machine-readable output (JSON)")
    listing.add_argument("-v", "--verbose", action="store_true",
                         help="show tracebacks of internal errors")
    listing.set_defaults(handler=cmd_list)

    reproduce = commands.add_parser("reproduce", help="run a catalogue experiment and report it",
                                    description=REPRODUCE_DESCRIPTION,
                                    epilog=REPRODUCE_EXAMPLE, formatter_class=fmt)
    reproduce.add_argument("names", nargs="+", metavar="NAME",
                           help="experiment names or globs such as 'dc-*' (see multiconn list); "
                                "several share one output folder and one report")
    reproduce.add_argument("--catalog", action="append", metavar="DIR",
                           help="also search this folder of sweep files (repeatable)")
    reproduce.add_argument("--no-report", action="store_true", help="skip the HTML report")
    _add_run_options(reproduce, positive_int)
    reproduce.set_defaults(handler=cmd_reproduce)

    results = commands.add_parser("results", help="export the results of an output folder",
                                  description=RESULTS_DESCRIPTION, formatter_class=fmt)
    results.add_argument("folder", metavar="DIR", help="output folder of a sweep")
    results.add_argument("--format", choices=("csv", "parquet", "json"), default="csv",
                         help="table format (default csv)")
    results.add_argument("--output", "-o", metavar="FILE",
                         help="write to FILE instead of standard output (required for parquet)")
    results.add_argument("--experiment", metavar="NAME", help="only this experiment")
    results.add_argument("--timing", action="store_true",
                         help="add each run's wall_time_s (not reproducible)")
    results.add_argument("-v", "--verbose", action="store_true",
                         help="show tracebacks of internal errors")
    results.set_defaults(handler=cmd_results)

    report = commands.add_parser("report", help="write the HTML report of a sweep or run folder",
                                 description=REPORT_DESCRIPTION, formatter_class=fmt)
    report.add_argument("folder", metavar="DIR",
                        help="output folder of a sweep, or of one `multiconn run`")
    report.add_argument("--out", metavar="DIR", help="report folder (default DIR/report)")
    from ..plot import add_view_options

    add_view_options(report)
    _add_talk(report)
    report.set_defaults(handler=cmd_report)


def _run(args: argparse.Namespace, sweep: Any) -> tuple[int, Any]:
    from .driver import run_sweep

    console = _stderr_console()
    say = None if args.quiet or args.json else (
        lambda text: console.print(f"[dim]{_escape(text)}[/dim]"))
    summary = run_sweep(sweep, args.out, jobs=args.jobs, backend=args.backend,
                        scheduler=args.scheduler, repetitions=args.reps, quick=args.quick,
                        progress=not (args.quiet or args.json), retry_failed=args.retry_failed,
                        rerun=args.rerun, max_runs=args.max_runs,
                        on_event=say)
    return (EXIT_RUNS_FAILED if summary.failures else 0), summary


def _print_summary(summary: Any, quiet: bool, verbose: bool = False) -> None:
    console = _stderr_console()
    if summary.failures:
        console.print(f"[red]{len(summary.failures)} failed run(s):[/red]")
        for f in summary.failures:
            where = ", ".join(f"{k}={v}" for k, v in f.labels.items()) or "base scenario"
            console.print(f"  point {f.point} ({_escape(where)}) rep {f.rep} seed {f.seed}: "
                          f"{_escape(f.error)}", highlight=False)
            console.print(f"    reproduce: {_escape(f.command)}", highlight=False)
    if quiet:
        return
    again = []
    if summary.rerun_missing_timeseries:
        again.append(f"{summary.rerun_missing_timeseries} again for the time series they lacked")
    if summary.rerun_asked:
        again.append(f"{summary.rerun_asked} again as --rerun asked")
    if summary.rerun_crashed:
        again.append(f"{summary.rerun_crashed} again after their worker process died")
    console.print(
        f"{summary.experiment}: {summary.planned} planned runs, {summary.already_done} already "
        f"in the store, {summary.ran} ran ({summary.succeeded} ok, {summary.failed} failed"
        f"{'; ' if again else ''}{', '.join(again)}) in {summary.wall_time_s:.1f} s; results "
        f"in {summary.out}", highlight=False)
    if not verbose and summary.note:  # one line, however wide the terminal
        console.print(f"[yellow]note:[/yellow] {_escape(summary.note)}", highlight=False,
                      soft_wrap=True)
    for note in summary.notes if verbose else []:
        console.print(f"[yellow]note:[/yellow] {_escape(note)}", highlight=False)


def cmd_sweep(args: argparse.Namespace) -> int:
    code, summary = _run(args, args.sweep_file)
    if args.json:
        sys.stdout.write(json.dumps(summary.to_dict(), indent=2) + "\n")
    else:
        _print_summary(summary, args.quiet, args.verbose)
    return code


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .catalog import select

    chosen = select(args.names, args.catalog)
    code, summaries = 0, []
    for entry in chosen:
        entry_code, summary = _run(args, entry.spec)
        code = max(code, entry_code)
        summaries.append(summary)
    report_path = None
    if not args.no_report:
        from .report import write_report

        report_path = write_report(args.out)
    if args.json:
        data: Any = [s.to_dict() for s in summaries]
        for d in data:
            d["report"] = None if report_path is None else str(report_path)
        sys.stdout.write(json.dumps(data[0] if len(data) == 1 else data, indent=2) + "\n")
    else:
        for summary in summaries:
            _print_summary(summary, args.quiet, args.verbose)
        if report_path is not None and not args.quiet:
            _stderr_console().print(f"report: {report_path}", highlight=False)
    return code


STUDY_COMMANDS = (
    ("multiconn drive analyse TABLE --out DIR",
     "the multi-operator study's Tables 2 and 3, Figures 1 and 2 (drive test -> capacities)"),
    ("multiconn drive download --segment residential|road --out DIR",
     "its Tables 4 and 5: picoquic (4 controllers) and MPTCP x cases sp-4 x 18 offsets"),
    ("multiconn run examples/scenarios/mpquic_figure6.toml",
     "its Figure 6: a constant 4 Mbit/s path and an 8 Mbit/s one from 2-4 s and 6-8 s"),
)
"""Experiments of the catalogue that are not sweeps, listed after the sweep entries."""


def cmd_list(args: argparse.Namespace) -> int:
    from .catalog import entries

    found = entries(args.catalog)
    if args.json:
        data = [{"name": e.name, "title": e.spec.title, "path": str(e.path),
                 "points": e.points, "repetitions": e.spec.repetitions,
                 "runs": e.points * e.spec.repetitions,
                 "quick_runs": e.quick_runs} for e in found]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    width = max((len(e.name) for e in found), default=0)
    for e in found:
        runs = f"{e.points}x{e.spec.repetitions} runs"
        print(f"{e.name:<{width}}  {runs:>14}  {e.spec.title}")
    print()
    print("Not sweeps, with their own commands:")
    for command, what in STUDY_COMMANDS:
        print(f"  {command}")
        print(f"      {what}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from .results import export, load
    from .spec import SweepError

    frame = load(args.folder, experiment=args.experiment, timing=args.timing)
    if args.format == "parquet" and not args.output:
        raise SweepError("--format parquet writes a binary file: give --output FILE")
    text = export(frame, args.format, args.output)
    if text is not None:
        sys.stdout.write(text)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..errors import SweepError
    from ..plot import view_options
    from ..plot.page import is_run_folder, write_run_page
    from .report import write_report

    view = view_options(args)
    if is_run_folder(args.folder):
        path = write_run_page(args.folder, args.out, view=view)
    else:
        given = [option for option, value, unset in (
            ("--from", view["from_s"], None), ("--to", view["to_s"], None),
            ("--ccdf-x", view["ccdf_x"], "log"), ("--ccdf-xlim", view["ccdf_xlim"], None))
            if value != unset]
        if given:
            raise SweepError(f"{', '.join(given)}: for the page of one run folder; a sweep's "
                             "figures take their range from the sweep file (a timeseries "
                             "plot's span = [\"2 s\", \"5 s\"])")
        path = write_report(args.folder, args.out)
    if args.json:
        sys.stdout.write(json.dumps({"report": str(path)}) + "\n")
    elif not args.quiet:
        print(f"report: {path}")
    return 0
