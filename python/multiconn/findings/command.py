"""`multiconn studies`: every finding of the four studies, run, judged and tabled.

Reads the lists (`listing`), checks them against the catalogue (`sources.check`) before
anything runs, runs what they need (`sources`), judges every finding (`evaluate`, `rule`) and
prints one row per finding and the counts per verdict. `--out DIR` keeps the runs (a second
call resumes them) and writes `studies.json` and `studies.md`; a full run (no `--quick`) also
writes the catalogue's HTML report, with the papers' values beside ours.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FindingsError

if TYPE_CHECKING:  # the parser is built for every `multiconn` command: the rest loads on use
    from .evaluate import Row
    from .listing import Study

DESCRIPTION = """\
Check every finding of the four source studies against our runs: run what each needs (the
catalogue's experiments, the multi-operator downloads), judge each finding by one rule
(docs/studies.md) and print the table: id, where in the paper, the paper's value, ours and the
verdict (reproduces, partially, does not), with the reason and doc section where one is
written. --quick runs the short versions (a few minutes on 2 cores)."""


def add_command(commands: Any, positive_int: Any) -> None:
    p = commands.add_parser("studies", help="check every finding of the four studies",
                            description=DESCRIPTION)
    p.add_argument("--quick", action="store_true",
                   help="short runs: each entry's [quick] settings over the points the "
                        "findings read, 6 start offsets for the downloads")
    p.add_argument("--only", action="append", metavar="STUDY",
                   help="one study (dc, mo, lte, v2x; repeatable)")
    p.add_argument("--out", metavar="DIR",
                   help="keep the runs here (resumed by a second call) and write studies.json, "
                        "studies.md and, without --quick, the catalogue's report")
    p.add_argument("--jobs", "-j", type=positive_int, metavar="N",
                   help="parallel runs (default: all cores)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--list", action="store_true",
                   help="print the findings without running anything")
    p.set_defaults(handler=cmd_studies)


def chosen(only: list[str] | None) -> list[Study]:
    from .listing import read_studies

    studies = read_studies()
    if not only:
        return studies
    ids = [s.id for s in studies]
    for sid in only:
        if sid not in ids:
            raise FindingsError(f"--only {sid}: unknown study (the studies: {', '.join(ids)})")
    return [s for s in studies if s.id in only]


def _say(quiet: bool) -> Any:
    def say(text: str) -> None:
        if not quiet:
            print(f"studies: {text}", file=sys.stderr, flush=True)
    return say


def run(studies: list[Study], out: Path, quick: bool, jobs: int | None,
        quiet: bool = False) -> list[Row]:
    """Runs what the findings need into `out` and judges them."""
    from .evaluate import evaluate
    from .listing import DRIVE_SOURCES
    from .sources import catalogue_frames, drive_frames

    say = _say(quiet)
    findings = [f for s in studies for f in s.findings]
    frames = catalogue_frames([f for f in findings if f.experiment not in DRIVE_SOURCES],
                              out, quick, jobs, say)
    for study in studies:
        drive = [f for f in study.findings if f.experiment in DRIVE_SOURCES]
        if drive:
            frames.update(drive_frames(drive, out, quick, jobs, study.testbed, say))
    return evaluate(studies, frames)


def markdown(rows: list[Row], quick: bool) -> str:
    """The table as Markdown, counts first."""
    from . import rule
    from .evaluate import counts

    lines = [f"# The studies' findings, checked ({'quick runs' if quick else 'full runs'})", ""]
    lines += ["| study | reproduces | partially | does not |", "|---|---|---|---|"]
    for key, c in counts(rows).items():
        lines.append(f"| {key} | " + " | ".join(str(c[v]) for v in rule.VERDICTS) + " |")
    lines += ["", "| id | where | claim | paper | ours | verdict | why | set-up |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        why = "" if r.verdict == rule.REPRODUCES else (r.reason or "no reason recorded yet")
        if r.doc:
            why += f" ([doc]({r.doc}))"
        cells = (r.id, r.where, r.claim, r.paper, f"{r.ours} ({r.detail})", r.verdict, why,
                 r.setup)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _print_table(rows: list[Row]) -> None:
    from . import rule
    from .evaluate import counts

    for r in rows:
        print(f"{r.id:<34} {r.verdict:<10} ours {r.ours}")
        print(f"{'':<34} paper {r.paper} ({r.where})")
        print(f"{'':<34} {r.detail}")
        if r.verdict != rule.REPRODUCES:
            why = r.reason or "no reason recorded yet"
            print(f"{'':<34} why: {why}{' (' + r.doc + ')' if r.doc else ''}")
    for key, c in counts(rows).items():
        print(f"{key}: " + ", ".join(f"{c[v]} {v}" for v in rule.VERDICTS))


def cmd_studies(args: argparse.Namespace) -> int:
    from .evaluate import counts
    from .sources import check

    studies = chosen(args.only)
    check(studies)
    if args.list:
        for s in studies:
            for f in s.findings:
                print(f"{f.id:<34} {f.where:<28} {f.claim}")
        return 0
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rows = run(studies, out, args.quick, args.jobs)
    else:
        with tempfile.TemporaryDirectory(prefix="multiconn-studies-") as tmp:
            rows = run(studies, Path(tmp), args.quick, args.jobs)
    data = {"quick": args.quick, "counts": counts(rows), "findings": [r.to_dict() for r in rows]}
    if args.out:
        (out / "studies.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        (out / "studies.md").write_text(markdown(rows, args.quick))
        if not args.quick:
            from ..sweep.report import write_report

            write_report(out / "catalogue")
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_table(rows)
    return 0
