"""Scenario sources and overrides: classification, TOML literals, `--set` parsing."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from multiconn.source import (
    ScenarioFileError,
    normalize_overrides,
    parse_set_option,
    resolve_source,
    toml_literal,
)


def test_path_source_keeps_the_path_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "s.toml").write_text('name = "x"\n')
    monkeypatch.chdir(tmp_path)
    for given in ("sub/s.toml", Path("sub/s.toml")):
        source = resolve_source(given)
        assert source.origin == os.fspath(given)
        assert source.base_dir == "sub"
        assert source.text == 'name = "x"\n'


def test_string_and_dict_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = resolve_source('name = "x"\n')
    assert (text.origin, text.base_dir) == ("<string>", os.getcwd())
    table = resolve_source({"name": "x", "run": {"duration": "1 s"}})
    assert table.origin == "<dict>"
    assert tomllib.loads(table.text) == {"name": "x", "run": {"duration": "1 s"}}


def test_missing_path_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError, match="nosuch.toml"):
        resolve_source(str(tmp_path / "nosuch.toml"))
    with pytest.raises(ScenarioFileError, match="nosuch.toml"):
        resolve_source(tmp_path / "nosuch.toml")


def test_non_utf8_file_is_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_bytes(b'name = "\xff"\n')
    with pytest.raises(ScenarioFileError, match="UTF-8"):
        resolve_source(tmp_path / "s.toml")


@pytest.mark.parametrize(
    "value, literal",
    [
        (True, "true"),
        (3, "3"),
        (0.25, "0.25"),
        (float("inf"), "inf"),
        ("10 ms", '"10 ms"'),
        ('a "q"\n', '"a \\"q\\"\\n"'),
        ([1, "a"], '[1, "a"]'),
        ({"model": "normal", "mean": "10 ms", "cv": 0.1}, '{model = "normal", mean = "10 ms", cv = 0.1}'),
        ({"a b": 1}, '{"a b" = 1}'),
    ],
)
def test_toml_literals(value: object, literal: str) -> None:
    assert toml_literal(value) == literal
    assert tomllib.loads(f"v = {literal}")["v"] == value


def test_overrides_normalisation() -> None:
    assert normalize_overrides(None) == []
    assert normalize_overrides({"run.seed": 3, "link.l.rate": "1 Mbit/s", "x.on": False}) == [
        ("run.seed", "3"), ("link.l.rate", "1 Mbit/s"), ("x.on", "false"),
    ]
    assert normalize_overrides([("a.b", 0.5)]) == [("a.b", "0.5")]
    with pytest.raises(TypeError):
        normalize_overrides(["a.b=1"])
    with pytest.raises(TypeError):
        normalize_overrides([("", "1")])


def test_set_option_splits_at_the_first_equals() -> None:
    assert parse_set_option("link.l.delay={model=\"normal\",cv=0.1}") == (
        "link.l.delay", '{model="normal",cv=0.1}',
    )
    assert parse_set_option(" run.duration = 5s ") == ("run.duration", "5s")
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_set_option("run.duration")
    with pytest.raises(ValueError, match="empty key"):
        parse_set_option("=5s")
