"""Progress of a sweep: done/total, rate, ETA and failures.

On a terminal (or in Jupyter) a rich progress bar on stderr; elsewhere (CI logs, pipes) one
line every `LOG_EVERY_S` seconds and at the end, so long sweeps always show that they move.
The same shows the validation of a sweep's points before its runs (`unit = "points"`): a bar
that goes away once the points are valid, or in logs a line every `LOG_EVERY_S` seconds.
"""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

LOG_EVERY_S = 10.0


class _RateColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"-- {self.unit}/s" if speed is None else f"{speed:.1f} {self.unit}/s",
                    style="progress.data.speed")


class _FailuresColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        failed = int(task.fields.get("failed", 0))
        return Text(f"{failed} failed", style="red" if failed else "dim")


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class SweepProgress:
    """Context manager told about each finished run, or with `unit = "points"` each validated
    point (then transient: nothing stays on a terminal, no last line in logs, and no count of
    failures, as the first invalid point ends the sweep)."""

    def __init__(self, name: str, total: int, enabled: bool, unit: str = "runs") -> None:
        self.name, self.total, self.enabled = name, total, enabled and total > 0
        self.unit = unit
        self.transient = unit != "runs"
        self.done = self.failed = 0
        self._started = self._last_log = time.monotonic()
        self._bar: Progress | None = None
        self._task: int | None = None

    def __enter__(self) -> SweepProgress:
        if not self.enabled:
            return self
        console = Console(stderr=True)
        if console.is_terminal or console.is_jupyter:
            columns = [TextColumn("[progress.description]{task.description}"), BarColumn(),
                       MofNCompleteColumn(), _RateColumn(self.unit), TimeElapsedColumn(),
                       TextColumn("ETA"), TimeRemainingColumn()]
            if not self.transient:
                columns.append(_FailuresColumn())
            self._bar = Progress(*columns, console=console, transient=self.transient)
            self._bar.start()
            self._task = self._bar.add_task(self.name, total=self.total, failed=0)
        return self

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        if self._bar is not None:
            assert self._task is not None
            self._bar.update(self._task, advance=1, failed=self.failed)
        elif time.monotonic() - self._last_log >= LOG_EVERY_S:
            self._log()

    def _log(self) -> None:
        self._last_log = now = time.monotonic()
        elapsed = now - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta_text = _clock(eta) if eta == eta else "-:--:--"
        failed = "" if self.transient else f", {self.failed} failed"
        print(f"{self.name}: {self.done}/{self.total} {self.unit}, {rate:.1f} {self.unit}/s, "
              f"elapsed {_clock(elapsed)}, ETA {eta_text}{failed}",
              file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.enabled and self.done and not self.transient:
            self._log()
