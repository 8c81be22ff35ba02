"""The QUIC crate stays in parts a reader can hold: its connection module at most 1,000 lines
and no source file of the crate over 1,200 (ADR 0005, decision 3)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUIC = ROOT / "crates" / "quic" / "src"


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_the_quic_connection_module_is_at_most_1000_lines() -> None:
    assert lines(QUIC / "connection.rs") <= 1000


def test_no_quic_source_file_is_over_1200_lines() -> None:
    sizes = {str(p.relative_to(QUIC)): lines(p) for p in QUIC.rglob("*.rs")}
    assert len(sizes) > 5, sizes
    assert {name: n for name, n in sizes.items() if n > 1200} == {}
