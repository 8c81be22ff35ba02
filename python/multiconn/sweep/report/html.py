"""The report page: experiment contents rendered through a Jinja2 template (autoescaped).

Numbers are shown with four significant digits (large ones as grouped integers); every
table cell holding a statistic also carries the exact values in `data-*` attributes, so the
page can be checked or scraped without parsing the display text.
"""

from __future__ import annotations

import math
from pathlib import Path

import jinja2

from .content import ExperimentContent

TEMPLATES = Path(__file__).parent / "templates"
PAGE = "report.html.j2"
MISSING = "—"


def number(value: float | None) -> str:
    """`38.86`, `0.6985`, `1,833,168`; a dash for no value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if abs(value) >= 10_000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def percent(value: float | None) -> str:
    """A signed percentage with one decimal; a dash for no value."""
    if value is None:
        return MISSING
    return f"{value:+.1f} %"


def exact(value: float | None) -> str:
    """A value for a `data-*` attribute: repr of the float, empty for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(number=number, percent=percent, exact=exact)
    return env


def render_page(folder: str, experiments: list[ExperimentContent]) -> str:
    """The whole report page for the results in `folder`."""
    return _environment().get_template(PAGE).render(folder=folder, experiments=experiments)
