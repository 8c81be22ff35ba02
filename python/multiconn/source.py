"""Turning what a caller passes (path, TOML text, dict; override pairs) into native arguments.

A scenario is handed to the Rust side as text plus an *origin* (its name in error messages)
and a *base directory* (the folder trace paths are relative to).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

ScenarioLike: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any] | ScenarioSource"
OverridesLike: TypeAlias = "Mapping[str, Any] | Iterable[tuple[str, Any]] | None"


class ScenarioFileError(OSError):
    """The scenario file could not be read (missing, unreadable, not UTF-8)."""


@dataclass(frozen=True)
class ScenarioSource:
    """Scenario text with the origin and base directory the Rust loader needs."""

    text: str
    origin: str
    base_dir: str


def _looks_like_toml(text: str) -> bool:
    return "\n" in text or "=" in text or "[" in text


def read_scenario_file(path: str | os.PathLike[str]) -> ScenarioSource:
    """Reads a scenario file; origin is the path as given, base_dir its folder."""
    shown = os.fspath(path)
    try:
        data = Path(shown).read_bytes()
    except FileNotFoundError:
        raise ScenarioFileError(f"cannot read scenario file '{shown}': no such file") from None
    except IsADirectoryError:
        raise ScenarioFileError(f"cannot read scenario file '{shown}': it is a directory") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ScenarioFileError(f"cannot read scenario file '{shown}': {reason}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioFileError(
            f"cannot read scenario file '{shown}': not UTF-8 text (byte {exc.start})"
        ) from None
    return ScenarioSource(text=text, origin=shown, base_dir=os.path.dirname(shown) or ".")


def resolve_source(scenario: ScenarioLike) -> ScenarioSource:
    """Classifies `scenario` as a path, a TOML string or a dict and prepares it."""
    if isinstance(scenario, ScenarioSource):
        return scenario
    if isinstance(scenario, Mapping):
        import tomli_w  # only a dict needs writing as TOML

        text = tomli_w.dumps(dict(scenario))
        return ScenarioSource(text=text, origin="<dict>", base_dir=os.getcwd())
    if isinstance(scenario, os.PathLike):
        return read_scenario_file(scenario)
    if isinstance(scenario, str):
        if os.path.isfile(scenario) or not _looks_like_toml(scenario):
            return read_scenario_file(scenario)
        return ScenarioSource(text=scenario, origin="<string>", base_dir=os.getcwd())
    raise TypeError(
        "scenario must be a path, a TOML string or a dict, not " + type(scenario).__name__
    )


def _toml_string(value: str) -> str:
    # JSON basic strings are TOML basic strings, except that TOML also forbids a raw DEL.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else _toml_string(key)


def toml_literal(value: Any) -> str:
    """Renders a Python value as a TOML value literal (inline tables and arrays included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(str(k))} = {toml_literal(v)}" for k, v in value.items())
        return "{" + items + "}" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} as a TOML value")


def override_value(value: Any) -> str:
    """An override value as the text `--set KEY=VALUE` would carry: strings pass through."""
    return value if isinstance(value, str) else toml_literal(value)


def normalize_overrides(overrides: OverridesLike) -> list[tuple[str, str]]:
    """A dict or a sequence of (key, value) pairs, as a list of (key, text) pairs."""
    if overrides is None:
        return []
    pairs: Iterable[Any] = overrides.items() if isinstance(overrides, Mapping) else overrides
    result: list[tuple[str, str]] = []
    for pair in pairs:
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise TypeError(f"an override must be a (key, value) pair, not {pair!r}")
        key, value = pair
        if not isinstance(key, str) or not key.strip():
            raise TypeError(f"an override key must be a non-empty string, not {key!r}")
        result.append((key.strip(), override_value(value)))
    return result


def parse_set_option(option: str) -> tuple[str, str]:
    """Splits a `--set KEY=VALUE` argument at its first `=`; raises ValueError when malformed."""
    key, sep, value = option.partition("=")
    if not sep:
        raise ValueError(f"--set expects KEY=VALUE, got '{option}' (no '=')")
    if not key.strip():
        raise ValueError(f"--set expects KEY=VALUE, got '{option}' (empty key)")
    return key.strip(), value.strip()
