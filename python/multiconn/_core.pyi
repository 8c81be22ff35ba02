"""Type stubs for the native extension `multiconn._core` (crates/py)."""

from collections.abc import Sequence

class ScenarioError(ValueError):
    """A scenario could not be parsed, overridden, validated or its trace files loaded."""

def version() -> str:
    """The version of the native crate."""

def validate(text: str, origin: str, base_dir: str, overrides: Sequence[tuple[str, str]]) -> str:
    """Loads and validates a scenario; returns the resolved scenario as JSON."""

class Simulation:
    """A run in progress, advanced in bounded steps of virtual time."""

    def __init__(
        self,
        text: str,
        origin: str,
        base_dir: str,
        overrides: Sequence[tuple[str, str]],
        seed: int | None = None,
    ) -> None: ...
    @property
    def end_time_s(self) -> float:
        """The time limit of the run, in seconds of virtual time."""
    @property
    def now_s(self) -> float:
        """Virtual time reached so far, in seconds."""
    @property
    def events(self) -> int:
        """Events processed so far."""
    @property
    def done(self) -> bool:
        """Whether the run is over."""
    @property
    def scenario_json(self) -> str:
        """The resolved scenario (after overrides) as JSON."""
    def run_until(self, t_s: float) -> bool:
        """Runs (GIL released) until virtual time `t_s`, the limit, or all flows done; returns done."""
    def finish(
        self,
    ) -> tuple[str, dict[str, list[float] | list[int] | list[str]], list[tuple[str, str]]]:
        """Ends the run: summary JSON and time-series columns. May be called once."""
