"""Access to the compiled extension `multiconn._core`, with a clear error when it is missing.

The pure-Python parts of the package (argument parsing, output writing) import without the
extension, so a broken build shows up as one readable message instead of an import traceback.
"""

from __future__ import annotations

from types import ModuleType

try:
    from . import _core as _loaded
except ImportError as exc:  # the extension was not built or does not match this Python
    _loaded = None
    IMPORT_ERROR: ImportError | None = exc
else:
    IMPORT_ERROR = None

HINT = (
    "the native extension multiconn._core is not available ({err}); build it with "
    "`make setup` (development) or `pip install .`"
)


def available() -> bool:
    """Whether the compiled extension could be imported."""
    return _loaded is not None


def core() -> ModuleType:
    """The extension module, or an ImportError that says how to build it."""
    if _loaded is None:
        raise ImportError(HINT.format(err=IMPORT_ERROR))
    return _loaded


if _loaded is not None:
    ScenarioError: type[ValueError] = _loaded.ScenarioError
else:

    class ScenarioError(ValueError):  # type: ignore[no-redef]
        """Stand-in raised for bad input when the extension is not built."""

        file: str | None = None
        line: int | None = None
        set: str | None = None
        path: str | None = None


__all__ = ["IMPORT_ERROR", "ScenarioError", "available", "core"]
