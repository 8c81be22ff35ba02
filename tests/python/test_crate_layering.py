"""The scenario crate reads top-down: no two of its modules import each other in a loop.

The graph is read from the Rust sources as the compiler resolves paths: every `crate::…`,
`super::…` and `self::…` path outside comments and unit-test modules (grouped `use` trees
included) is an edge from the file it is in to the module it names, the longest prefix that
is a module of the crate. Two levels are checked:

* the crate's top-level modules (`schema`, `resolve`, `sim`, `report`, …): a straight stack,
  no loop at all (lib.rs, the crate's face, declares them and is not a module of its own);
* the files inside each folder (`resolve/*.rs`, `sim/*.rs`), leaving out the folder's
  `mod.rs`, its face; a file's own child modules (`sim/hosts/*.rs`) count as that file.

`KNOWN_LOOPS` lists the loops still allowed: none.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "crates" / "scenario" / "src"

KNOWN_LOOPS: list[set[str]] = []

Module = tuple[str, ...]


def module_of(src: Path, f: Path) -> Module:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts == ["lib"]:
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def code_of(text: str) -> str:
    """The text without unit tests, comments and string literals."""
    text = text.split("#[cfg(test)]")[0]
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("//"):
            continue
        line = re.sub(r'"([^"\\]|\\.)*"', '""', line)
        lines.append(line.split("//")[0])
    return "\n".join(lines)


def use_tree(s: str, i: int) -> tuple[list[list[str]], int]:
    """The paths of the use tree (or plain path) starting at s[i], and where it ends."""
    m = re.match(r"\s*\{", s[i:])
    if m:
        i += m.end()
        paths: list[list[str]] = []
        while True:
            end = re.match(r"\s*\}", s[i:])
            if end:
                return paths, i + end.end()
            sub, i = use_tree(s, i)
            paths += sub
            comma = re.match(r"\s*,", s[i:])
            if comma:
                i += comma.end()
    m = re.match(r"\s*(\w+|\*)", s[i:])
    if not m:
        return [[]], i
    ident, i = m.group(1), i + m.end()
    sep = re.match(r"\s*::", s[i:])
    if sep:
        sub, i = use_tree(s, i + sep.end())
        return [[ident, *p] for p in sub], i
    return [[ident]], i


def import_graph(src: Path) -> tuple[set[Module], dict[Module, set[Module]]]:
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f) for f in files}
    edges: dict[Module, set[Module]] = {}
    for f in files:
        me = module_of(src, f)
        code = code_of(f.read_text())
        for m in re.finditer(r"\b(crate|super|self)::", code):
            # `super` is the parent module (for a mod.rs, its folder's parent), `self` this one.
            base = {"crate": (), "super": me[:-1], "self": me}[m.group(1)]
            for path in use_tree(code, m.end())[0]:
                full = base + tuple(path)
                k = len(full)
                while k > 0 and full[:k] not in modules:
                    k -= 1
                if full[:k] != me:
                    edges.setdefault(me, set()).add(full[:k])
    return modules, edges


def loops(nodes: set[Module], edges: dict[Module, set[Module]]) -> list[set[Module]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    stack: list[Module] = []
    on_stack: set[Module] = set()
    found: list[set[Module]] = []

    def visit(v: Module) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def named(component: set[Module]) -> set[str]:
    return {"::".join(m) for m in component}


def scenario_loops() -> tuple[list[set[str]], list[set[str]]]:
    modules, edges = import_graph(SCENARIO)
    top = {m[:1] for m in modules if m}
    top_edges: dict[Module, set[Module]] = {}
    for a, bs in edges.items():
        for b in bs:
            if a and b and a[:1] != b[:1]:
                top_edges.setdefault(a[:1], set()).add(b[:1])
    # A file's own child modules (sim/hosts/*.rs of sim/hosts/mod.rs) count as that file.
    folder_edges: dict[Module, set[Module]] = {}
    for a, bs in edges.items():
        for b in bs:
            if len(a) >= 2 and len(b) >= 2 and a[0] == b[0] and a[:2] != b[:2]:
                folder_edges.setdefault(a[:2], set()).add(b[:2])
    files = {m[:2] for m in modules if len(m) >= 2}
    return [named(c) for c in loops(top, top_edges)], [named(c) for c in loops(files, folder_edges)]


def test_the_scenario_crates_top_level_modules_form_a_straight_stack() -> None:
    top, _ = scenario_loops()
    assert top == [], f"top-level modules importing each other in a loop: {top}"


def test_no_files_of_one_folder_import_each_other_in_a_loop_but_the_known_one() -> None:
    _, folders = scenario_loops()
    assert sorted(map(sorted, folders)) == sorted(map(sorted, KNOWN_LOOPS))


@pytest.mark.parametrize(
    ("files", "loop"),
    [
        ({"lib.rs": "pub mod a;\npub mod b;", "a.rs": "use crate::b::B;", "b.rs": "pub struct B;\nfn f() { crate::a::g(); }"}, True),
        ({"lib.rs": "pub mod a;\npub mod b;", "a.rs": "use crate::b::B;", "b.rs": "pub struct B;\n// crate::a::g()"}, False),
        ({"lib.rs": "pub mod a;\npub mod b;", "a.rs": "use crate::{b::B, c};", "b.rs": "#[cfg(test)]\nmod t { use crate::a::*; }"}, False),
        ({"lib.rs": "pub mod a;\npub mod b;", "a.rs": "use crate::{x, b::{B, C}};", "b.rs": "use crate::a;"}, True),
    ],
)
def test_the_reader_sees_loops_through_use_trees_and_paths_and_not_through_comments_or_tests(
    tmp_path: Path, files: dict[str, str], loop: bool
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    modules, edges = import_graph(tmp_path)
    assert bool(loops({m for m in modules if m}, edges)) is loop
