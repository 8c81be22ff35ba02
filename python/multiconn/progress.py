"""A progress bar for a run that appears only once the run has lasted about a second.

Short runs stay silent; long ones show simulated seconds done / total, events, elapsed time and
the estimated time left, on stderr (or as a widget in Jupyter). rich is imported when the bar
first appears, so a short run never loads it.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress

DELAY_S = 1.0
"""Wall time after which the bar appears."""


def _clock(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "-:--:--"
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _columns() -> tuple[Any, ...]:
    """The bar's columns: label, bar, simulated seconds, events, wall time and time left."""
    from rich.progress import BarColumn, ProgressColumn, Task, TextColumn
    from rich.text import Text

    class SimTimeColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            total = "?" if task.total is None else f"{task.total:.1f}"
            return Text(f"{task.completed:.1f}/{total} s", style="progress.download")

    class EventsColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.fields.get('events', 0):,} events", style="progress.data.speed")

    class WallColumn(ProgressColumn):
        """Wall time since the run started, and the time left at the current pace."""

        def render(self, task: Task) -> Text:
            wall = float(task.fields.get("wall_s", 0.0))
            left = None
            if task.total is not None and task.completed > 0:
                left = wall * max(task.total - task.completed, 0.0) / task.completed
            return Text(f"{_clock(wall)} ETA {_clock(left)}", style="progress.elapsed")

    return (TextColumn("[progress.description]{task.description}"), BarColumn(bar_width=16),
            SimTimeColumn(), EventsColumn(), WallColumn())


class RunProgress:
    """Context manager fed with (simulated time, events) after every step of a run."""

    def __init__(self, total_s: float | None, enabled: bool, label: str = "sim") -> None:
        self._total = total_s
        self._label = label
        self._enabled = enabled
        self._started = time.monotonic()
        self._progress: Progress | None = None
        self._task: int | None = None

    def __enter__(self) -> RunProgress:
        self._started = time.monotonic()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self, sim_time_s: float, events: int) -> None:
        from rich.console import Console
        from rich.progress import Progress

        console = Console(stderr=True)
        if not (console.is_terminal or console.is_jupyter):
            self._enabled = False
            return
        self._progress = Progress(*_columns(), console=console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(
            self._label, total=self._total, completed=sim_time_s, events=events,
            wall_s=time.monotonic() - self._started,
        )

    def update(self, sim_time_s: float, events: int) -> None:
        """Reports progress; opens the bar once the run has lasted DELAY_S of wall time."""
        if not self._enabled:
            return
        if self._progress is None:
            if time.monotonic() - self._started < DELAY_S:
                return
            self._open(sim_time_s, events)
            return
        assert self._task is not None
        self._progress.update(
            self._task, completed=sim_time_s, events=events,
            wall_s=time.monotonic() - self._started,
        )

    def close(self) -> None:
        """Removes the bar, if it was shown."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
