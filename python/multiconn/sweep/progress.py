"""Progress of a sweep: done/total, rate, ETA and failures.

On a terminal (or in Jupyter) a rich progress bar on stderr; elsewhere (CI logs, pipes) one
line every `LOG_EVERY_S` seconds and at the end, so long sweeps always show that they move.
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
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- runs/s" if speed is None else f"{speed:.1f} runs/s",
                    style="progress.data.speed")


class _FailuresColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        failed = int(task.fields.get("failed", 0))
        return Text(f"{failed} failed", style="red" if failed else "dim")


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class SweepProgress:
    """Context manager told about each finished run."""

    def __init__(self, name: str, total: int, enabled: bool) -> None:
        self.name, self.total, self.enabled = name, total, enabled and total > 0
        self.done = self.failed = 0
        self._started = self._last_log = time.monotonic()
        self._bar: Progress | None = None
        self._task: int | None = None

    def __enter__(self) -> SweepProgress:
        if not self.enabled:
            return self
        console = Console(stderr=True)
        if console.is_terminal or console.is_jupyter:
            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"), BarColumn(),
                MofNCompleteColumn(), _RateColumn(), TimeElapsedColumn(),
                TextColumn("ETA"), TimeRemainingColumn(), _FailuresColumn(),
                console=console, transient=False,
            )
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
        print(f"{self.name}: {self.done}/{self.total} runs, {rate:.1f} runs/s, "
              f"elapsed {_clock(elapsed)}, ETA {eta_text}, {self.failed} failed",
              file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.enabled and self.done:
            self._log()
