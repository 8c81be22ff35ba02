"""The experiment catalogue: a folder of sweep files, one experiment each.

The catalogue shipped with multiconn lives in the package (`multiconn/catalog`); folders
named in the environment variable MULTICONN_CATALOG (separated by ':') are searched first,
so a lab can keep its own experiments beside the built-in ones. An entry's name is its file
name without `.toml`.
"""

from __future__ import annotations

import fnmatch

import os
from dataclasses import dataclass
from pathlib import Path

from .spec import SweepError, SweepSpec, load_sweep

BUILTIN = Path(__file__).resolve().parent.parent / "catalog"
ENV_VAR = "MULTICONN_CATALOG"


@dataclass(frozen=True)
class Entry:
    """A catalogue entry, parsed."""

    name: str
    path: Path
    spec: SweepSpec

    @property
    def points(self) -> int:
        return self.spec.point_count

    @property
    def quick_runs(self) -> int:
        quick = self.spec.quick_version()
        return quick.point_count * quick.repetitions


def folders(extra: list[str] | None = None) -> list[Path]:
    """The catalogue folders, in search order."""
    chosen = [Path(p) for p in (extra or [])]
    chosen += [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p]
    chosen.append(BUILTIN)
    return chosen


def entries(extra: list[str] | None = None) -> list[Entry]:
    """Every entry (the first of each name wins), sorted by name; a broken file is an error."""
    found: dict[str, Entry] = {}
    for folder in folders(extra):
        if not folder.is_dir():
            raise SweepError(f"catalogue folder '{folder}' does not exist")
        for path in sorted(folder.glob("*.toml")):
            if path.stem not in found:
                found[path.stem] = Entry(path.stem, path, load_sweep(path))
    return [found[name] for name in sorted(found)]


def select(patterns: list[str], extra: list[str] | None = None) -> list[Entry]:
    """The entries named by `patterns` (names or shell-style globs such as `dc-*`), in the
    order given, each once; a SweepError names a pattern that matches nothing."""
    chosen: list[Entry] = []
    for pattern in patterns:
        if not any(c in pattern for c in "*?["):
            found = [find(pattern, extra)]
        else:
            found = [e for e in entries(extra) if fnmatch.fnmatchcase(e.name, pattern)]
            if not found:
                raise SweepError(f"no experiment in the catalogue matches {pattern!r} "
                                 "(see `multiconn list`)")
        chosen.extend(e for e in found if e.name not in {c.name for c in chosen})
    return chosen


def find(name: str, extra: list[str] | None = None) -> Entry:
    """The entry called `name`, or a SweepError listing the names there are."""
    for folder in folders(extra):
        path = folder / f"{name}.toml"
        if path.is_file():
            return Entry(name, path, load_sweep(path))
    names = sorted({p.stem for f in folders(extra) if f.is_dir() for p in f.glob("*.toml")})
    raise SweepError(f"no experiment named {name!r} in the catalogue (experiments: "
                     f"{', '.join(names) or 'none'}; see `multiconn list`)")
