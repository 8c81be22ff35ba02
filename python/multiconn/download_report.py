"""The report of a download experiment (`multiconn.downloads`): our Table 4/5 beside the
study's, the study's findings checked on both, and a goodput figure.

Writes into the experiment's folder: `table.csv` (ours: mean and SD per stack and case),
`comparison.csv` (ours and the study's side by side, when the segment is one of the study's),
`findings.json`, `goodput.png` and `report.md`.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .downloads import CASES, Experiment, findings, study_table

if TYPE_CHECKING:
    import pandas as pd

STACK_LABELS = {"bbr": "picoquic bbr", "cubic": "picoquic cubic", "fast": "picoquic fast",
                "reno": "picoquic reno", "mptcp": "MPTCP"}


def comparison(ours: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """Ours and the study's, row by row (the study's row order), for the rows both have."""
    merged = study.merge(ours, on=["stack", "case"], suffixes=("_study", ""), how="inner")
    columns = ["idx", "stack", "case"]
    for metric in ("goodput_mbps", "mp_capacity_mbps", "sp_capacity_mbps", "completion_s"):
        sd = metric.rsplit("_", 1)[0] + "_sd"
        columns += [metric, sd, f"{metric}_study", f"{sd}_study"]
    return merged[columns + ["handovers", "incomplete"]]


def _cell(mean: Any, sd: Any) -> str:
    if mean is None or mean != mean:  # None or NaN
        return "—"
    return f"{mean:.2f} ± {sd:.2f}"


def _verdict(value: bool | None) -> str:
    return {True: "holds", False: "does not hold", None: "—"}[value]


def plot_goodput(table: pd.DataFrame, study: pd.DataFrame | None, folder: Path,
                 title: str) -> list[Path]:
    """Goodput per case, one bar per stack (ours, with ± SD), the study's as black marks."""
    import matplotlib as mpl

    from . import figstyle

    stacks = [s for s in STACK_LABELS if s in set(table["stack"])]
    cases = [c for c in CASES if c in set(table["case"])]
    width = 0.8 / max(len(stacks), 1)
    with mpl.rc_context(figstyle.RC):  # type: ignore[arg-type]
        fig, (ax,) = figstyle.new_figure(rows=1, height_in=4.4)
        handles: list[Any] = []
        names: list[str] = []
        study_mark: Any = None
        for i, stack in enumerate(stacks):
            xs, ys, errs, sx, sy = [], [], [], [], []
            for j, case in enumerate(cases):
                row = table[(table["stack"] == stack) & (table["case"] == case)]
                x = j + (i - (len(stacks) - 1) / 2) * width
                if not row.empty and row["goodput_mbps"].notna().all():
                    xs.append(x)
                    ys.append(float(row["goodput_mbps"].iloc[0]))
                    errs.append(float(row["goodput_sd"].iloc[0]))
                if study is not None:
                    srow = study[(study["stack"] == stack) & (study["case"] == case)]
                    if not srow.empty:
                        sx.append(x)
                        sy.append(float(srow["goodput_mbps"].iloc[0]))
            bars = ax.bar(xs, ys, width=width * 0.92, yerr=errs, capsize=2,
                          color=f"C{i}", error_kw={"elinewidth": 0.8})
            handles.append(bars)
            names.append(STACK_LABELS[stack])
            if sx:
                (mark,) = ax.plot(sx, sy, linestyle="none", marker="D", markersize=4,
                                  color="black")
                study_mark = mark
        if study_mark is not None:
            handles.append(study_mark)
            names.append("the study's mean")
        ax.set_xticks(range(len(cases)), [f"case {c}" for c in cases])
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(figstyle.title_text(title, "bars: mean ± SD over the start offsets"),
                     fontsize=figstyle.TITLE_POINTS)
        figstyle.legend_below(fig, handles, names)
        return figstyle.save_figure(fig, folder, "goodput", ("png",))


def write_report(experiment: Experiment, runs: pd.DataFrame, table: pd.DataFrame,
                 out: str | Path, wall_s: float | None = None) -> dict[str, Any]:
    """Writes the report files into `out`; returns what `findings.json` holds."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "table.csv", index=False, float_format="%.4f")
    study = None
    try:
        study = study_table(experiment.name)
    except ValueError:
        pass
    ours_found = findings(table)
    study_found = {f.key: f.holds for f in findings(study)} if study is not None else {}
    result = {
        "experiment": experiment.name,
        "runs": len(runs),
        "incomplete": int((runs["completed"] != True).sum()),  # noqa: E712 (pandas)
        "scale": experiment.scale,
        "testbed": experiment.testbed.name,
        "mechanisms": sorted(experiment.testbed.mechanisms),
        "offsets_s": list(experiment.offsets_s),
        "size_bytes": experiment.size_bytes,
        "wall_s": wall_s,
        "delay_curve": experiment.delay_text(),
        "queue": experiment.queue_text(),
        "warnings": experiment.warnings(),
        "findings": [{**asdict(f), "study": study_found.get(f.key)} for f in ours_found],
    }
    (out / "findings.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if study is not None:
        comparison(table, study).to_csv(out / "comparison.csv", index=False,
                                        float_format="%.4f")
    title = (f"Download goodput, {experiment.name} segment" if study is not None
             else f"Download goodput, {experiment.name}")
    if experiment.testbed.mechanisms:
        title += f", {experiment.testbed.name} testbed"
    plot_goodput(table, study, out, title)

    lines = [f"# Download experiment: {experiment.name}", ""]
    lines.append(f"{len(runs)} runs: {len(set(runs['stack']))} stacks × "
                 f"{len(set(runs['case']))} cases × {len(experiment.offsets_s)} start offsets "
                 f"({', '.join(str(o) for o in experiment.offsets_s)} s); "
                 f"{experiment.size_bytes} bytes each"
                 + (f"; {wall_s:.1f} s of wall time." if wall_s is not None else "."))
    if experiment.testbed.mechanisms:
        from .testbeds import MECHANISMS

        lines.append(f"Testbed: {experiment.testbed.name} ("
                     + "; ".join(f"{m}: {MECHANISMS[m]}" for m in sorted(experiment.testbed.mechanisms))
                     + ").")
    else:
        lines.append("Testbed: ideal (the physical model, no emulation artefact).")
    lines.append(f"Access links: delay curve {experiment.delay_text()}; queues "
                 f"{experiment.queue_text()}.")
    lines += [f"Warning: {line}" for line in experiment.warnings()]
    if experiment.scale != 1.0:
        lines.append(f"Capacities scaled by {experiment.scale:.4f} so that the mean best "
                     "channel matches the study's SP capacity (the level only; how much more "
                     "channels add is the model's own).")
    lines += ["", "![goodput](goodput.png)", "", "## Table", ""]
    header = ["stack", "case", "goodput", "MP capacity", "SP capacity", "completion (s)",
              "handovers"]
    if study is not None:
        header += ["study goodput", "study MP", "study SP", "study completion"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for _, row in table.iterrows():
        cells = [STACK_LABELS.get(row["stack"], row["stack"]), row["case"],
                 _cell(row["goodput_mbps"], row["goodput_sd"]),
                 _cell(row["mp_capacity_mbps"], row["mp_capacity_sd"]),
                 _cell(row["sp_capacity_mbps"], row["sp_capacity_sd"]),
                 _cell(row["completion_s"], row["completion_sd"]),
                 _cell(row["handovers"], row["handovers_sd"])]
        if row["incomplete"]:
            cells[2] += f" ({row['incomplete']} incomplete)"
        if study is not None:
            s = study[(study["stack"] == row["stack"]) & (study["case"] == row["case"])]
            for metric in ("goodput_mbps", "mp_capacity_mbps", "sp_capacity_mbps",
                           "completion_s"):
                sd = metric.rsplit("_", 1)[0] + "_sd"
                cells.append(_cell(s[metric].iloc[0], s[sd].iloc[0]) if not s.empty else "—")
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "Mbit/s unless marked; mean ± sample SD over the completed runs.", "",
              "## The study's findings", "", "| finding | ours | study | ours in detail |",
              "|---|---|---|---|"]
    for f in ours_found:
        lines.append(f"| {f.text} | {_verdict(f.holds)} | {_verdict(study_found.get(f.key))}"
                     f" | {f.detail} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    return result
